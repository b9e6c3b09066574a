"""The chat loads the agent, its SDK and the tokenizer a moment after start-up, in a
worker, so the first question the analyst sends does not pay for them (tiktoken's
tokenizer build holds the GIL and would stall the window while an answer streams)."""

from __future__ import annotations

from tests.ui.conftest import open_main_window


def test_the_agent_is_loaded_after_start_up_when_a_model_is_configured(
    qtbot, shell_services, fake_openai, monkeypatch
):
    from lantide import tokens

    for key, value in fake_openai.env().items():
        monkeypatch.setenv(key, value)
    tokens._encoding.cache_clear()
    window = open_main_window(qtbot, shell_services())
    with qtbot.waitSignal(window.chat.sig_agent_loaded, timeout=60_000):
        pass
    assert window.chat.agent_loaded
    assert tokens._encoding.cache_info().currsize == 1
    fake_openai.assert_done()  # loading made no request
