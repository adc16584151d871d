"""URI templates: how a URI is cut into variables (the same as the regular expression used
before, without its backtracking), the length limit of templates that split several ways, and
how values are percent-decoded."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit._uritemplate import MAX_SPLIT_LENGTH, VARIABLE, UriTemplate, decode


def backtracking(template: str) -> re.Pattern[str]:
    """The regular expression templates were matched with before (the reference semantics)."""
    pattern, last = [], 0
    for found in VARIABLE.finditer(template):
        pattern.append(re.escape(template[last : found.start()]))
        pattern.append("(.+)" if found.group(1) else "([^/?#]+)")
        last = found.end()
    pattern.append(re.escape(template[last:]))
    return re.compile("".join(pattern))


TEXT = st.text(alphabet="ab/.?#\n", max_size=3)


@st.composite
def template_and_uri(draw: st.DrawFn) -> tuple[str, str]:
    """A template of 1-3 variables over a few characters, and a URI close to matching it."""
    literals = [draw(st.text(alphabet="ab/.?#", max_size=2)) for _ in range(4)]
    count = draw(st.integers(1, 3))
    template, uri = literals[0], literals[0]
    for index in range(count):
        template += "{" + draw(st.sampled_from(["", "+"])) + f"v{index}}}" + literals[index + 1]
        uri += draw(st.text(alphabet="ab/.?#\n", min_size=1, max_size=4)) + literals[index + 1]
    return template, draw(st.sampled_from([uri, uri + draw(TEXT), draw(TEXT) + uri]))


@given(template_and_uri())
def test_split_is_what_the_backtracking_expression_matched(case: tuple[str, str]) -> None:
    template, uri = case
    found = backtracking(template).fullmatch(uri)
    assert UriTemplate(template).split(uri) == (list(found.groups()) if found else None)


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("users://{id}/profile", "users://42/profile", ["42"]),
        ("users://{id}/profile", "users://4/2/profile", None),
        ("notes://day/{day}/{+path}", "notes://day/7/team/standup.md", ["7", "team/standup.md"]),
        ("repo://{+owner}/{+path}.md", "repo://a/b/c.md", ["a/b", "c"]),
        ("pair://{left}.{right}", "pair://x.y.z", ["x.y", "z"]),
        ("pair://{left}.{right}", "pair://x.y/z", None),
        ("x://{a}{b}", "x://abc", ["ab", "c"]),
        ("x://{+a}\n", "x://a\nb\n", None),
        ("docs://{+path}", "docs://", None),
    ],
    ids=[
        "simple",
        "simple-stops-at-slash",
        "cut-at-once",
        "reserved-greedy",
        "simple-greedy",
        "simple-cannot-cross-slash",
        "adjacent",
        "reserved-no-line-break",
        "empty",
    ],
)
def test_split(template: str, uri: str, expected: list[str] | None) -> None:
    assert UriTemplate(template).split(uri) == expected


def test_templates_that_split_several_ways_match_uris_up_to_the_limit() -> None:
    template = UriTemplate("repo://{+owner}/{+path}.md")
    owner = "o" * (MAX_SPLIT_LENGTH - len("repo:///p.md"))
    assert template.split(f"repo://{owner}/p.md") == [owner, "p"]
    assert template.split(f"repo://{owner}x/p.md") is None
    # templates that cut a URI at once have no such limit
    long = "x" * (2 * MAX_SPLIT_LENGTH)
    assert UriTemplate("users://{id}/{+path}").split(f"users://1/{long}") == ["1", long]


@pytest.mark.parametrize(
    ("part", "reserved", "value"),
    [
        ("plain", False, "plain"),
        ("Jos%C3%A9", False, "José"),
        ("a%2Fb%3f%20c", False, "a/b? c"),
        ("a%2Fb%3f%20c", True, "a%2Fb%3f c"),
        ("%2e%2e%7e%41", True, "..~A"),
        ("50%25", True, "50%"),
        ("café", True, "café"),
        ("%zz", False, None),
        ("%4", True, None),
        ("%C3", False, None),
        ("%C3%2F%A9", True, None),
    ],
    ids=[
        "no-triplet",
        "utf-8",
        "simple-decodes-all",
        "reserved-keeps-reserved",
        "unreserved-decoded",
        "percent",
        "raw-non-ascii",
        "not-hex",
        "cut-short",
        "not-utf-8",
        "utf-8-split-by-a-kept-triplet",
    ],
)
def test_decode(part: str, reserved: bool, value: str | None) -> None:
    assert decode(part, reserved) == value
