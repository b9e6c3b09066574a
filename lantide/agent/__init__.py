"""The agent: a ReAct engine with layered context, tools and a step ledger (headless).

Entry points:

- :class:`lantide.agent.session.AgentSession`: ``open(workspace, conversation_id=None)``,
  ``run_turn(message, cancel) -> Iterator[Event]``, ``prompt_preview()``, ``close()``;
- :mod:`lantide.agent.events`: the past-tense events a turn yields (``to_dict()``);
- :class:`lantide.agent.cancel.CancelToken`: stop a turn from another thread;
- :class:`lantide.agent.app_state.AppStateProvider`: how the desktop app supplies live
  tabs (the command line reads ``.lantide/session.json``);
- :class:`lantide.agent.model_client.ModelClient`: the model boundary;
- :class:`lantide.agent.ledger.Ledger` and :mod:`lantide.agent.conversation`: files.

Nothing here imports Qt; heavy modules (openai, duckdb) load on first use.
"""
