"""The paying entity of the port configuration (``[employer]``, issue 34 item 9) and the office's
``[web] public_url``: a CNPJ with wrong check digits or an empty name is refused naming its key;
a valid one is kept as its 14 bare characters; an address that is not http(s) is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from central.config import load_central_config
from central.pay.loading import load_port_config
from portgate.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]


def _port(tmp_path: Path, employer: str) -> Path:
    text = (ROOT / "config/port.example.toml").read_text(encoding="utf-8")
    text = text.replace('rulebook = "rulebooks/', f'rulebook = "{ROOT}/config/rulebooks/')
    head, _sep, rest = text.partition("[employer]\n")
    rest = rest.split("\n\n", 1)[1]
    (tmp_path / "port.toml").write_text(head + employer + "\n" + rest, encoding="utf-8")
    return tmp_path / "port.toml"


def test_the_example_employer_is_read_with_its_bare_cnpj():
    emp = load_port_config(ROOT / "config/port.example.toml").employer
    assert emp.cnpj == "11222333000181" and "fictício" in emp.name and emp.address


@pytest.mark.parametrize("employer, key, words", [
    ('[employer]\nname = "OGMO"\ncnpj = "11.222.333/0001-82"\n', "$.employer.cnpj", "fails its check digits"),
    ('[employer]\nname = "OGMO"\ncnpj = "11.222.333/0001"\n', "$.employer.cnpj", "is not 14 digits"),
    ('[employer]\nname = "  "\ncnpj = "11.222.333/0001-81"\n', "$.employer.name", "name is required"),
])
def test_a_bad_employer_is_refused_naming_its_key(tmp_path, employer, key, words):
    with pytest.raises(ConfigError) as exc:
        load_port_config(_port(tmp_path, employer))
    assert exc.value.key == key and words in str(exc.value)


def test_the_alphanumeric_cnpj_is_accepted(tmp_path):
    emp = load_port_config(_port(tmp_path, '[employer]\nname = "OGMO"\ncnpj = "12.ABC.345/01DE-35"\n')).employer
    assert emp.cnpj == "12ABC34501DE35"


@pytest.mark.parametrize("url, ok", [("https://escritorio.porto.example", True), ("http://10.0.0.5:8080/ponto", True),
                                     ("escritorio.porto.example", False), ("https://x.example/?a=1", False)])
def test_public_url_must_be_an_http_address(tmp_path, url, ok):
    text = (ROOT / "config/central.example.toml").read_text(encoding="utf-8")
    text = text.replace('public_url = "https://escritorio.porto.example"', f'public_url = "{url}"')
    (tmp_path / "central.toml").write_text(text, encoding="utf-8")
    if ok:
        assert load_central_config(tmp_path / "central.toml").web.public_url == url
    else:
        with pytest.raises(ConfigError, match="public_url"):
            load_central_config(tmp_path / "central.toml")
