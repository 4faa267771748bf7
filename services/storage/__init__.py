"""The only package that writes SQL: the database and its migrations, and one owner per
table (memories with their full-text rows, resolved dates, findings, search metrics,
recorded query words, links, usage and the knowledge tables)."""
