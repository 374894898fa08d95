"""docs/model.md and docs/validation.md open with the list of their sections ("In order: ..."): every section of
the page (a paragraph that opens in bold) is named in it, so that a section added later is not missing from the
page's own table of contents."""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# model.md's fault records open in bold with their date and are listed in plain words ("the faults found and fixed")
PLAIN = re.compile(r"^(Faults found|Fixed) 2026-")


def words(text: str) -> str:
    return " ".join(text.split()).rstrip(".")


@pytest.mark.parametrize("page", ["docs/model.md", "docs/validation.md"])
def test_the_opening_list_names_every_section(page: str) -> None:
    text = (ROOT / page).read_text()
    intro, rest = text.split("\n\nIn order: ", 1)[1].split("\n\n", 1)
    listed = [words(name) for name in re.findall(r"\*\*(.+?)\*\*", intro, re.S)]
    sections = [words(name) for name in re.findall(r"(?m)^\*\*(.+?)\*\*", rest)]
    assert sections
    unlisted = [s for s in sections if not PLAIN.match(s) and not any(s.startswith(name) for name in listed)]
    assert not unlisted, f"{page}: sections not in its opening list: {unlisted}"
