"""Pure generators over published definitions (layer L6, never loaded by ``import mcpkit``).

They read the JSON objects a client receives (``tools/list`` items and the like) and nothing
else, so the docs, the linter and the contract diff can never disagree with the server:

- :mod:`~mcpkit.docgen.fields`: a JSON Schema in words (rows, types, constraints, examples);
- :mod:`~mcpkit.docgen.model`: a snapshot -> a document of sections and tables;
- :mod:`~mcpkit.docgen.markdown`, :mod:`~mcpkit.docgen.html`: that document rendered;
- :mod:`~mcpkit.docgen.lint`: findings about definitions (``mcpkit check``);
- :mod:`~mcpkit.docgen.changes`: two snapshots -> classified changes (``mcpkit diff``).
"""
