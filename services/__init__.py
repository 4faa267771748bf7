"""The services layer grouped into the packages of DESIGN.md: root vocabulary, text,
storage, vectors, search, memories, activity, context, knowledge, llm and rem."""
