"""Major versions written after a product's name: "Node 18", "PostgreSQL 16", "Vue 3",
"Windows 7", "Java 17", "minimum PostgreSQL is now 15".

People name a runtime, a database, an operating system or a framework by its major
version alone, with no dot to say it is one ("CI runs Node 18 and 20", "we moved to
PostgreSQL 17"), so the version readers that want "1.23" or ">=18" miss the change from
one to the next. Only names of widely used products count: after any capitalised word a
number is as often a step, a chapter, an issue or a count ("Step 2", "Phase 3").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PRODUCTS", "ProductVersion", "product_versions"]

# Runtimes and languages, databases and stores, operating systems, frameworks and tools.
# `Go` is left out ("go 2 levels up"); its versions are written with a dot ("Go 1.23").
PRODUCTS = (
    "Node.js", "Nodejs", "Node", "Python", "Java", "JDK", "OpenJDK", "Ruby", "PHP", "Rust",
    "Perl", "Kotlin", "Swift", "Scala", "Elixir", "Erlang", "OTP", "Dart", "Flutter",
    ".NET", "dotnet", "TypeScript", "Deno", "Bun", "Lua", "Julia", "Zig", "Clang", "GCC",
    "LLVM",
    "PostgreSQL", "Postgres", "MySQL", "MariaDB", "SQLite", "MongoDB", "Mongo", "Redis",
    "Valkey", "Elasticsearch", "OpenSearch", "Cassandra", "ClickHouse", "SQL Server",
    "Kafka", "RabbitMQ", "Nginx", "Tomcat",
    "Ubuntu", "Debian", "Alpine", "CentOS", "RHEL", "Fedora", "Windows", "macOS", "iOS",
    "iPadOS", "Android", "FreeBSD",
    "React", "React Native", "Vue", "Angular", "Svelte", "SvelteKit", "Next.js", "Nuxt",
    "Django", "Rails", "Laravel", "Symfony", "Spring", "Spring Boot", "Express", "Flask",
    "Ember", "jQuery", "Bootstrap", "Tailwind", "Webpack", "Vite", "Rollup", "Babel",
    "ESLint", "Prettier", "Jest", "Vitest", "Mocha", "pytest", "PHPUnit", "JUnit", "Gradle",
    "Maven", "Xcode", "Electron", "Kubernetes", "Terraform", "Ansible", "Helm", "Jenkins",
    "Celery", "Pydantic", "SQLAlchemy", "NumPy", "pandas", "TensorFlow", "PyTorch",
    "Storybook", "Gatsby", "Remix", "Astro", "Qt", "GTK", "OpenSSL", "Unity", "Godot",
    "Chrome", "Chromium", "Firefox", "Safari", "Hibernate", "Sidekiq", "Puppeteer",
    "Playwright", "Cypress", "Selenium", "Spark", "Hadoop", "Airflow", "Ember.js", "Vue.js",
)  # fmt: skip
_NAMES = "|".join(re.escape(p) for p in sorted(PRODUCTS, key=len, reverse=True))
# "Node 18", "Node v20", "PostgreSQL 16": one to three digits, not a decimal ("Node 18.2"
# is read as a version already), not a percentage or a size, not the start of a range
# written with a dash ("Python 3-4" says nothing of one version).
# Or stated with a verb or a colon: "minimum PostgreSQL is now 15", "Node: 20", when no
# unit or "times" follows ("Redis is 3 times faster" says nothing of a version).
_PRODUCT_VERSION = re.compile(
    rf"(?<![\w.-])(?P<product>{_NAMES})"
    r"(?:\s+(?:is|was|are)(?:\s+(?:now|still))?\s+|\s*[:=]\s*|\s+)"
    r"v?(?P<major>\d{1,3})(?![\w%]|\.\d|-\d|\s*(?:x|times|ms|s|sec|seconds|minutes|[kmg]b)\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ProductVersion:
    product: str  # lower case, as written: "node", "postgresql"
    major: str
    start: int
    end: int


def product_versions(text: str) -> list[ProductVersion]:
    """The product names followed by a major version in `text`, in order."""
    return [
        ProductVersion(m.group("product").lower(), m.group("major"), m.start(), m.end())
        for m in _PRODUCT_VERSION.finditer(text)
    ]
