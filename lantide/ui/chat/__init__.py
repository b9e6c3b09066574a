"""The chat panel and what it shows of the agent: transcript, tool cards, the worker bridge
to the agent loop, and the ledger panel."""
