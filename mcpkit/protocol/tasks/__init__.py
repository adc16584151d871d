"""Tasks (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663): the record and its store
(:mod:`.store`) and the runner that drives one asyncio task per task (:mod:`.runner`)."""
