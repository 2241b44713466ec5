"""An unknown login costs an argon2id verify as a known one does (``central.web.users._DUMMY``): the
dummy hash written in the module is a hash of its text with the hasher's current parameters, so the
verify does the same work as a user's hash would."""

from __future__ import annotations

import pytest
from argon2.exceptions import VerifyMismatchError

from central.web import users


def test_the_dummy_hash_is_of_the_hashers_parameters_and_verifies_only_its_text():
    assert not users._hasher.check_needs_rehash(users._DUMMY)
    assert users._hasher.verify(users._DUMMY, "not a password of anyone")
    with pytest.raises(VerifyMismatchError):
        users._hasher.verify(users._DUMMY, "")
    made = users._hasher.hash("x")
    assert made.split("$")[:4] == users._DUMMY.split("$")[:4]  # same algorithm, version, m/t/p
