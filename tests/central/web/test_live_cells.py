"""The live panel's posts and aboard cells, built in Python (central.web.routes.live, issue 32 item 6),
write what the template loops they replace wrote: the same markup, every value escaped as Jinja's
autoescape does (hostile names and codes included), in both page languages."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from central.web.codewords import function_label, post_label
from central.web.readmodel import Post
from central.web.render import local_time, env
from central.web.routes.live import _aboard_cell, _posts_cell

TZ = ZoneInfo("America/Sao_Paulo")
#: the template loops as they were before the cells (live_panel.html, main ae13e4f7)
POSTS_LOOP = (
    "{% for post in posts %}<span class=\"post{{ ' on' if post.aboard }}\" data-post=\"{{ post.post }}\" "
    "data-function=\"{{ post.function }}\">{{ post_name(post.post) }}/{{ function_name(post.function) }}: "
    "{{ post.registration }} {{ post.name }}{% if post.aboard %} ✔{% endif %}</span>{% if not loop.last %}; "
    "{% endif %}{% endfor %}")
ABOARD_LOOP = (
    "{% for reg, name, at in aboard %}<span class=\"person\" data-registration=\"{{ reg }}\">{{ reg }} {{ name }} "
    "({{ when(at) }})</span>{% if not loop.last %}, {% endif %}{% endfor %}")
HOSTILE = ("<b>&amp;\"'", "O'Neil & <Sons>", 'x"y')


@pytest.mark.parametrize("lang", ["pt", "en"])
def test_the_posts_cell_is_the_template_loops_markup(lang):
    posts = [Post("portalo", "vigia", "V001", "Ana", True), Post("porao", "vigia_chefe", "V002", "", False),
             Post(HOSTILE[0], HOSTILE[2], "V'3", HOSTILE[1], True), Post("p1", "x<y>", "V004", "Bruno", False)]
    loop = env.from_string(POSTS_LOOP).render(
        posts=posts, post_name=lambda c: post_label(lang, c), function_name=lambda c: function_label(lang, c))
    assert str(_posts_cell(lang)(posts)) == loop
    assert "&lt;b&gt;&amp;amp;&#34;&#39;" in loop and "O&#39;Neil &amp; &lt;Sons&gt;" in loop
    assert str(_posts_cell(lang)([])) == ""


@pytest.mark.parametrize("lang", ["pt", "en"])
def test_the_aboard_cell_is_the_template_loops_markup(lang):
    at = dt.datetime(2026, 3, 15, 22, 5, 9, tzinfo=dt.UTC)
    aboard = [("V001", "Ana", at), ("V<2>", HOSTILE[1], at + dt.timedelta(hours=5)), ("V'3", HOSTILE[0], at)]
    loop = env.from_string(ABOARD_LOOP).render(aboard=aboard, when=local_time(TZ, lang))
    assert str(_aboard_cell(TZ, lang)(aboard)) == loop
    assert "V&lt;2&gt;" in loop and ("(19:05:09)" if lang == "pt" else "(7:05:09 PM)") in loop
