"""Invite codes (`matchmaker/invites.py`): how they look, and what reading one forgives."""

from __future__ import annotations

import collections
import re

from matchmaker import invites
from tests.servers import ROOT

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # base32 without I, L, O, U


def test_a_new_code_is_four_dash_separated_groups_of_four_base32_characters() -> None:
    for _ in range(200):
        code = invites.new_code()
        groups = code.split("-")
        assert [len(group) for group in groups] == [4, 4, 4, 4], code
        assert all(char in CROCKFORD for char in "".join(groups)), code
        assert invites.normalize(code) == "".join(groups)


def test_new_codes_use_the_whole_alphabet_evenly() -> None:
    # 80 random bits: every one of the 32 characters turns up in every position.
    codes = [invites.new_code().replace("-", "") for _ in range(2000)]
    assert len(set(codes)) == len(codes)
    for position in range(16):
        seen = collections.Counter(code[position] for code in codes)
        assert set(seen) == set(CROCKFORD), position


def test_reading_a_code_forgives_case_separators_and_look_alike_letters() -> None:
    assert invites.normalize("7K3M-9QX2-HF4P-T8WZ") == "7K3M9QX2HF4PT8WZ"
    assert invites.normalize("7k3m9qx2hf4pt8wz") == "7K3M9QX2HF4PT8WZ"
    assert invites.normalize(" 7K3M_9QX2.HF4P--T8WZ ") == "7K3M9QX2HF4PT8WZ"
    assert invites.normalize("iIlL-oOoO-0000-1111") == "1111000000001111"


def test_text_that_cannot_be_a_code_is_refused() -> None:
    for bad in (
        "",
        "7K3M-9QX2-HF4P",  # too short
        "7K3M-9QX2-HF4P-T8WZ-0",  # too long
        "7K3M-9QX2-HF4P-T8WU",  # U is not in the alphabet
        "7K3M-9QX2-HF4P-T8W!",
        "7K3M+9QX2+HF4P+T8WZ",  # not a separator
    ):
        assert invites.normalize(bad) is None, bad


def test_long_text_is_refused_before_it_is_read() -> None:
    # Up to four characters a code character are read (separators and spaces around a
    # code); longer text is refused at once, however it would normalize.
    padded = "7K3M9QX2HF4PT8WZ".center(64, "-")
    assert invites.normalize(padded) == "7K3M9QX2HF4PT8WZ"
    assert invites.normalize(padded + "-") is None


def test_the_groups_of_a_code_are_sixteen_independent_characters() -> None:
    # 80 bits only if no group repeats characters of another: overlapping groups (a code
    # cut from fewer random characters) would share three characters every time.
    codes = [invites.new_code().split("-") for _ in range(2000)]
    overlapping = [groups for groups in codes if groups[0][1:] == groups[1][:3]]
    assert len(overlapping) < 10  # about 2000 / 32**3 by chance


def test_the_readmes_invite_examples_are_codes_in_the_form_players_get() -> None:
    readme = (ROOT / "README.md").read_text()
    examples = re.findall(r"^wargame play --join (\S+)", readme, re.MULTILINE)
    assert len(examples) >= 2
    for code in examples:  # as typed from the README, and as the matchmaker prints one
        assert code == "-".join(re.findall(".{4}", invites.normalize(code) or "")), code
