"""``mcpkit dev``'s page in a real browser (headless Chromium, Selenium): forms, failures on
their fields, answers, progress, elicitation and reload on save, all over the App's real
Streamable HTTP endpoint. Skipped without Chromium, except under ``CI=true`` (see
``browser_support``)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    ROOT,
    DevProcess,
    artifacts,
    chrome,
    dev_process,
    require_chromium,
    wait_for,
)

ARCH_FAILURE = 'arch: expected one of "arm64", "x86_64"; received "ARM"'


@pytest.fixture
def browser(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    require_chromium()
    driver = chrome(tmp_path / "profile")
    try:
        yield driver
    finally:
        driver.save_screenshot(str(artifacts() / f"{request.node.name}.png"))
        driver.quit()


@pytest.fixture
def builder() -> Iterator[DevProcess]:
    yield from dev_process("examples/build_app.py:app")


@pytest.fixture
def shapes() -> Iterator[DevProcess]:
    yield from dev_process("tests/dev_app.py:app")


@pytest.fixture
def everything() -> Iterator[DevProcess]:
    yield from dev_process("examples/everything.py:app")


def open_page(driver: Any, url: str, era: str = "2025-11-25") -> None:
    from selenium.webdriver.support.ui import Select

    driver.get(url)
    wait_for(
        driver, lambda d: d.find_element("css selector", "body[data-connected]"), "no connection"
    )
    if era != "2025-11-25":
        Select(driver.find_element("id", "era")).select_by_value(era)
        wait_for(
            driver, lambda d: d.find_elements("css selector", f'body[data-connected="{era}"]'), era
        )


def section(driver: Any, key: str) -> Any:
    return wait_for(
        driver, lambda d: d.find_element("css selector", f'section[data-key="{key}"]'), key
    )


def text_of(driver: Any, parent: Any, selector: str) -> str:
    """The text of ``selector`` under ``parent`` once it has some."""
    return str(
        wait_for(driver, lambda _: parent.find_element("css selector", selector).text, selector)
    )


def call(tool: Any) -> None:
    button = tool.find_element("css selector", "button.call")
    # in the middle of the window: at its top edge the sticky header would take the click
    tool.parent.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()


@pytest.mark.parametrize(
    ("era", "refusal"),
    [
        ("2025-06-18", "JSON-RPC error -32602: Invalid params"),  # the error's data
        ("2025-11-25", "isError: true"),  # the result's _meta["mcpkit/invalidArguments"]
    ],
)
def test_raw_json_fails_on_arch_before_sending_and_as_the_server_refuses_it(
    browser: Any, builder: DevProcess, era: str, refusal: str
) -> None:
    open_page(browser, builder.url, era)
    tool = section(browser, "tool:build-app")
    tool.find_element("css selector", ".raw-toggle").click()
    raw = tool.find_element("css selector", "textarea.raw")
    raw.clear()
    raw.send_keys('{"project_dir": ".", "arch": "ARM"}')
    call(tool)
    assert text_of(browser, tool, ".error.general") == ARCH_FAILURE
    assert "invalid" in tool.find_element("css selector", '[data-field="arch"]').get_attribute(
        "class"
    )
    assert tool.find_element("css selector", ".answer").text == ""  # nothing was sent

    tool.find_element("css selector", "input.validate").click()  # send it anyway
    call(tool)
    assert text_of(browser, tool, ".answer .status") == refusal
    assert tool.find_element("css selector", ".error.general").text == ARCH_FAILURE
    assert "invalid" in tool.find_element("css selector", '[data-field="arch"]').get_attribute(
        "class"
    )


def test_the_form_calls_build_app_and_shows_its_structured_content(
    browser: Any, builder: DevProcess
) -> None:
    from selenium.webdriver.support.ui import Select

    open_page(browser, builder.url)
    tool = section(browser, "tool:build-app")
    tool.find_element("css selector", '[data-field="project_dir"]').send_keys("./app")
    Select(tool.find_element("css selector", '[data-field="arch"]')).select_by_visible_text("arm64")
    call(tool)
    assert text_of(browser, tool, ".answer .status") == "ok"
    structured = tool.find_element("css selector", ".answer pre.structured").text
    assert structured == '{\n  "exit_code": 0,\n  "output": "app-debug-arm64.pkg"\n}'


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_a_progress_bar_reaches_100(browser: Any, everything: DevProcess, era: str) -> None:
    open_page(browser, everything.url, era)
    tool = section(browser, "tool:test_tool_with_progress")
    call(tool)
    assert text_of(browser, tool, ".answer pre.text") == "Progress test completed."
    bar = tool.find_element("css selector", ".progress progress")
    assert (bar.get_attribute("value"), bar.get_attribute("max")) == ("100", "100")
    assert tool.find_element("css selector", ".progress-label").text == "100%"


def ask_with(browser: Any, url: str, era: str, name: str, text: str) -> tuple[Any, Any]:
    """Call ``name`` with ``text`` in its one field; its tool section and the question's card."""
    open_page(browser, url, era)
    tool = section(browser, f"tool:{name}")
    tool.find_element("css selector", "[data-field]").send_keys(text)
    call(tool)
    return tool, wait_for(browser, lambda d: d.find_element("css selector", "#asks .ask"), "card")


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_an_elicitation_is_answered_in_the_page(
    browser: Any, everything: DevProcess, era: str
) -> None:
    tool, card = ask_with(browser, everything.url, era, "test_elicitation", "Who are you?")
    assert card.find_element("css selector", ".message").text == "Who are you?"
    card.find_element("css selector", '[data-field="username"]').send_keys("ada")
    card.find_element("css selector", '[data-field="email"]').send_keys("ada@example.com")
    card.find_element("css selector", "button.accept").click()
    assert text_of(browser, tool, ".answer pre.text") == (
        "User response: action=accept, content={'username': 'ada', 'email': 'ada@example.com'}"
    )
    assert browser.find_elements("css selector", "#asks .elicitation") == []


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_the_author_types_the_models_reply_sets_roots_and_reads_logs(
    browser: Any, everything: DevProcess, era: str
) -> None:
    tool, card = ask_with(browser, everything.url, era, "test_sampling", "Say hi")
    assert card.find_element("css selector", ".sampled").text == "user:\nSay hi"
    card.find_element("css selector", "textarea.reply").send_keys("Hello!")
    card.find_element("css selector", "button.send").click()
    assert text_of(browser, tool, ".answer pre.text") == "LLM response: Hello!"

    roots = browser.find_element("id", "roots")
    roots.clear()
    roots.send_keys("file:///srv/project project\nfile:///srv")
    browser.find_element("id", "roots-save").click()
    tool = section(browser, "tool:test_input_required_result_list_roots")
    call(tool)
    assert text_of(browser, tool, ".answer pre.text") == (
        "Roots: ['file:///srv/project', 'file:///srv']"
    )

    call(section(browser, "tool:test_logging_tool"))
    line = wait_for(
        browser,
        lambda d: [li.text for li in d.find_elements("css selector", "#log .level-info")],
        "log line",
    )
    assert line[0].endswith(" [info] test_logging_tool ran")


def test_prompts_complete_while_typing_and_templates_read(
    browser: Any, everything: DevProcess
) -> None:
    open_page(browser, everything.url)
    prompt = section(browser, "prompt:test_prompt_with_arguments")
    prompt.find_element("css selector", '[data-field="arg1"]').send_keys("te")
    options = wait_for(
        browser,
        lambda _: [
            o.get_attribute("value")
            for o in prompt.find_elements("css selector", "datalist option")
        ],
        "completion",
    )
    assert options == ["testValue1"]
    prompt.find_element("css selector", '[data-field="arg2"]').send_keys("b")
    prompt.find_element("css selector", "button.get").click()
    assert text_of(browser, prompt, ".result .message") == (
        "user:\nPrompt with arguments: arg1='te', arg2='b'"
    )

    template = section(browser, "template:test://template/{id}/data")
    template.find_element("css selector", '[data-field="id"]').send_keys("a b")
    template.find_element("css selector", "button.read").click()
    assert (
        text_of(browser, template, ".result .uri") == "test://template/a%20b/data application/json"
    )


def field(tool: Any, path: str) -> Any:
    return tool.find_element("css selector", f'[data-field="{path}"]')


def failure(tool: Any, path: str) -> str:
    return str(tool.find_element("css selector", f'[data-error-for="{path}"]').text)


def test_numbers_booleans_lists_objects_and_enums_have_fields(
    browser: Any, shapes: DevProcess
) -> None:
    from selenium.webdriver.support.ui import Select

    open_page(browser, shapes.url)
    tool = section(browser, "tool:echo")

    count = field(tool, "count")
    assert (count.get_attribute("min"), count.get_attribute("max")) == ("1", "10")
    field(tool, "count").send_keys("11")
    adding = tool.find_element("css selector", '.array[data-field="tags"] > button')
    adding.click()
    adding.click()
    field(tool, "tags.0").send_keys("a")
    field(tool, "tags.1").send_keys("b")
    field(tool, "point.x").send_keys("1")
    call(tool)
    assert wait_for(browser, lambda _: failure(tool, "count"), "count") == (
        "count: expected <= 10; received 11"
    )
    assert failure(tool, "point.y") == "point.y: required"
    assert tool.find_element("css selector", ".answer").text == ""

    field(tool, "count").clear()
    field(tool, "count").send_keys("3")
    field(tool, "point.y").send_keys("2")
    field(tool, "flag").click()
    Select(field(tool, "mode")).select_by_visible_text("slow")
    call(tool)
    assert text_of(browser, tool, ".answer .status") == "ok"
    assert json.loads(tool.find_element("css selector", ".answer pre.structured").text) == {
        "count": 3,
        "flag": True,
        "tags": ["a", "b"],
        "point": {"x": 1, "y": 2},
        "ratio": 0.5,
        "mode": "slow",
    }
    assert (failure(tool, "count"), failure(tool, "point.y")) == ("", "")

    walk = section(browser, "tool:walk")  # a recursive schema: fields to a depth, then JSON
    deepest = "node" + ".parent" * 6
    assert field(walk, deepest).get_attribute("class") == "json"
    field(walk, "node.name").send_keys("leaf")
    field(walk, "node.parent.name").send_keys("root")
    call(walk)
    assert text_of(browser, walk, ".answer pre.text") == "leaf/root"


NEW_TOOL = '''

@app.tool
def fresh_tool(word: str) -> str:
    """A tool written while the page was open."""
    return word.upper()
'''


def test_editing_the_target_reloads_the_page_keeping_form_values(
    browser: Any, tmp_path: Path
) -> None:
    target = tmp_path / "app.py"
    shutil.copy(ROOT / "examples" / "build_app.py", target)
    original = target.read_text(encoding="utf-8")
    for served in dev_process(f"{target}:app", cwd=tmp_path):
        open_page(browser, served.url)
        tool = section(browser, "tool:build-app")
        tool.find_element("css selector", '[data-field="project_dir"]').send_keys("./kept")

        target.write_text(original + NEW_TOOL, encoding="utf-8")
        added = section(browser, "tool:fresh_tool")
        assert added.find_element("css selector", "h3").text == "fresh_tool"
        kept = browser.find_element(
            "css selector", 'section[data-key="tool:build-app"] [data-field="project_dir"]'
        )
        assert kept.get_attribute("value") == "./kept"

        broken = original + "\n\ndef broken(:\n"
        target.write_text(broken, encoding="utf-8")
        error = _syntax_error(broken, str(target))
        shown = wait_for(
            browser,
            lambda d: (
                d.find_element("id", "banner").is_displayed()
                and d.find_element("id", "load-error").text
            ),
            "banner",
        )
        assert shown == f"app.py:{error.lineno}: SyntaxError: {error.msg}"  # relative to the cwd
        assert browser.find_elements("css selector", 'section[data-key="tool:fresh_tool"]')

        target.write_text(original, encoding="utf-8")
        wait_for(
            browser, lambda d: not d.find_element("id", "banner").is_displayed(), "banner hidden"
        )
        wait_for(
            browser,
            lambda d: not d.find_elements("css selector", 'section[data-key="tool:fresh_tool"]'),
            "tool gone",
        )


def _syntax_error(source: str, filename: str) -> SyntaxError:
    try:
        compile(source, filename, "exec")
    except SyntaxError as exc:
        return exc
    raise AssertionError("the source compiled")


@pytest.mark.parametrize(
    ("ci", "outcome"), [("true", pytest.fail.Exception), ("", pytest.skip.Exception)]
)
def test_a_missing_chromium_skips_except_under_ci(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ci: str, outcome: type[BaseException]
) -> None:
    import browser_support

    monkeypatch.setattr(browser_support, "CHROMIUM", tmp_path / "chromium")
    # (whether this machine has a chromedriver must not change the message)
    monkeypatch.setattr(browser_support, "CHROMEDRIVER", tmp_path / "chromedriver")
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome) as raised:
        require_chromium()
    missing = f"{tmp_path / 'chromium'} and {tmp_path / 'chromedriver'}"
    reason = f"{missing} missing (apt-get install chromium chromium-driver)"
    assert str(raised.value) == (f"{reason}; CI=true requires it" if ci else reason)
