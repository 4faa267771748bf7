"""What a source file is about: the names it defines and the names it imports."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.text.source_symbols import SourceSymbols, language_of, parse_source

# Excerpts of ../shared/bench/corpus-2k/src, copied so the tests stand alone.
REFUNDS_PY = '''\
"""Helpers for invoice handling in the billing module (excerpt)."""
from __future__ import annotations

import logging

from ledgerly.ledger.accounts import settle_nightly_ledger_account

log = logging.getLogger(__name__)


def patch_locked_refund(invoice, *, dry_run: bool = False):
    """Patch locked refund."""
    if dry_run:
        return None
    result = settle_nightly_ledger_account(invoice)
    log.info("patch_locked_refund done")
    return result


def seal_unsent_refund(invoice, *, dry_run: bool = False):
    """Seal unsent refund."""
    if dry_run:
        return None
    return settle_nightly_ledger_account(invoice)
'''

SYNC_TS = """\
// sync.ts (excerpt)
import { pruneScopedCache } from '@/offline/cache';

export async function loadDeltaMutation(draftId: string): Promise<unknown> {
  if (!draftId) {
    return undefined;
  }
  return pruneScopedCache(draftId);
}

export async function refreshFrozenMutation(draftId: string): Promise<unknown> {
  return pruneScopedCache(draftId);
}
"""

APPLY_GO = """\
// Package k8s: k8s helpers (excerpt).
package k8s

import (
\t"context"
\t"fmt"

\t"github.com/shipit-dev/shipit/pkg/api"
)

// LoadOrphanedManifest is part of the k8s flow.
func LoadOrphanedManifest(ctx context.Context, rolloutID string) error {
\tif err := api.SettleSignedRelease(ctx, rolloutID); err != nil {
\t\treturn fmt.Errorf("k8s: %w", err)
\t}
\treturn nil
}

// WarmFallbackManifest is part of the k8s flow.
func WarmFallbackManifest(ctx context.Context, rolloutID string) error {
\treturn api.SettleSignedRelease(ctx, rolloutID)
}
"""


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("billing/refunds.py", "python"),
        ("stubs/refunds.pyi", "python"),
        ("src/offline/sync.ts", "typescript"),
        ("src/Board.tsx", "typescript"),
        ("src/index.js", "javascript"),
        ("src/App.JSX", "javascript"),
        ("src/config.mjs", "javascript"),
        ("internal/k8s/apply.go", "go"),
        ("README.md", None),
        ("Makefile", None),
    ],
)
def test_language_of(path: str, language: str | None) -> None:
    assert language_of(path) == language


def test_other_files_have_no_symbols() -> None:
    symbols = parse_source("notes.txt", "def looks_like_python(): pass\n")
    assert symbols == SourceSymbols(None)
    assert symbols.identifiers == ()


# --- Python ---------------------------------------------------------------------------------


def test_python_file_from_the_corpus() -> None:
    symbols = parse_source("ledgerly/billing/refunds.py", REFUNDS_PY)
    assert symbols.language == "python"
    assert symbols.defined == ("patch_locked_refund", "seal_unsent_refund")
    assert symbols.imported == ("settle_nightly_ledger_account",)
    assert set(symbols.modules) == {"logging", "ledgerly.ledger.accounts"}
    assert "log" not in symbols.defined  # a lowercase module-level variable is not a name


def test_python_future_imports_are_not_names() -> None:
    symbols = parse_source("a.py", "from __future__ import annotations\nimport os\n")
    assert symbols.imported == ()
    assert symbols.modules == ("os",)


def test_a_python_package_imported_whole_is_an_external_name() -> None:
    """`import httpx` then `httpx.Client(...)`: a note about `httpx.Client` is about the
    file (its name had been read and never used); the standard library says nothing."""
    text = "import httpx\nimport os, json\nfrom decimal import Decimal\n"
    assert parse_source("a.py", text).external == ("httpx",)
    broken = text + "def broken(:\n"  # read by the patterns when the parser fails
    assert parse_source("a.py", broken).external == ("httpx",)


def test_python_definitions() -> None:
    text = (
        "MAX_RETRIES = 3\n"
        "TIMEOUT_S: float = 2.5\n"
        "default_region = 'eu'\n"
        "__all__ = ['Ledger']\n"
        "class Ledger:\n"
        "    LIMIT = 10\n"
        "    def __init__(self):\n"
        "        self.x = 1\n"
        "    def post_entry(self):\n"
        "        def inner_helper():\n"
        "            pass\n"
        "async def fetch_rates():\n"
        "    pass\n"
        "def f():\n"
        "    pass\n"
    )
    symbols = parse_source("ledger.py", text)
    assert set(symbols.defined) == {
        "MAX_RETRIES",
        "TIMEOUT_S",
        "Ledger",
        "post_entry",
        "inner_helper",
        "fetch_rates",
    }


def test_python_imports() -> None:
    text = (
        "import os.path\n"
        "import json as j\n"
        "from ledgerly.ledger import settle_ledger, post_entry as post\n"
        "from . import sibling_module\n"
        "from .tax import *\n"
    )
    symbols = parse_source("a.py", text)
    assert symbols.imported == ("settle_ledger", "post_entry", "sibling_module")
    assert set(symbols.modules) == {"os.path", "json", "ledgerly.ledger", "tax"}
    assert symbols.identifiers == ("settle_ledger", "post_entry", "sibling_module")


def test_python_that_does_not_parse_falls_back_to_patterns() -> None:
    half_typed = (
        "from ledgerly.ledger import (\n"
        "    settle_ledger,  # the nightly one, not the manual one\n"
        "    post_entry as post,\n"
        ")\n"
        "from ledgerly.money import to_cents, round_half_even as rhe\n"
        "import ledgerly.tax\n"
        "MAX_REFUND_DAYS = 30\n"
        "def issue_refund(invoice):\n"
        "    return settle_ledger(invoice\n"  # unclosed call: a SyntaxError
        "class RefundPolicy(\n"
    )
    symbols = parse_source("refunds.py", half_typed)
    assert symbols.language == "python"
    assert set(symbols.defined) == {"issue_refund", "RefundPolicy", "MAX_REFUND_DAYS"}
    assert symbols.imported == ("settle_ledger", "post_entry", "to_cents", "round_half_even")
    assert set(symbols.modules) == {"ledgerly.ledger", "ledgerly.money", "ledgerly.tax"}


def test_python_nested_too_deeply_for_the_parser_falls_back_to_patterns() -> None:
    # ast.parse raises RecursionError (or MemoryError) here, not SyntaxError
    text = "x = " + "-" * 5000 + "1\ndef handle_refund(invoice):\n    pass\n"
    assert parse_source("generated.py", text).defined == ("handle_refund",)


def test_identifiers_are_defined_then_imported_without_repeats() -> None:
    text = "from a import shared_name\ndef shared_name():\n    pass\ndef own_name():\n    pass\n"
    symbols = parse_source("a.py", text)
    assert symbols.identifiers == ("shared_name", "own_name")


# --- TypeScript / JavaScript --------------------------------------------------------------


def test_typescript_file_from_the_corpus() -> None:
    symbols = parse_source("pinboard-ui/src/offline/sync.ts", SYNC_TS)
    assert symbols.language == "typescript"
    assert symbols.defined == ("loadDeltaMutation", "refreshFrozenMutation")
    assert symbols.imported == ("pruneScopedCache",)
    assert symbols.modules == ("@/offline/cache",)


def test_typescript_declarations() -> None:
    text = (
        "export function formatMoney(cents: number) {}\n"
        "export const DEFAULT_CURRENCY = 'EUR';\n"
        "export default class BoardStore {}\n"
        "export interface DraftCard { id: string }\n"
        "export type CardId = string;\n"
        "export enum Lane { Todo, Done }\n"
        "declare const buildStamp: string;\n"
        "function* walkCards() {}\n"
        "  let localCount = 0;\n"
        "const ab = 1;\n"  # too short to be worth matching
    )
    symbols = parse_source("board.ts", text)
    assert symbols.defined == (
        "formatMoney",
        "DEFAULT_CURRENCY",
        "BoardStore",
        "DraftCard",
        "CardId",
        "Lane",
        "buildStamp",
        "walkCards",
        "localCount",
    )


def test_typescript_import_forms() -> None:
    text = (
        "import React, { useState, useEffect as onEffect } from 'react';\n"
        "import * as api from './api';\n"
        "import type { DraftCard } from './types';\n"
        'import { type CardId, formatMoney } from "./money";\n'
        "import {\n"
        "  pruneScopedCache,\n"
        "  loadCache as load,\n"
        "} from '@/offline/cache';\n"
        "import './styles.css';\n"
        "import Board from './Board';\n"
    )
    symbols = parse_source("App.tsx", text)
    assert symbols.language == "typescript"
    assert symbols.external == ("useState", "useEffect", "React")  # a package's names
    assert symbols.imported == (
        "api",
        "DraftCard",
        "CardId",
        "formatMoney",
        "pruneScopedCache",
        "loadCache",
        "Board",
    )
    assert set(symbols.modules) == {
        "react",
        "./api",
        "./types",
        "./money",
        "@/offline/cache",
        "./styles.css",
        "./Board",
    }


def test_default_import_after_a_side_effect_import_is_kept() -> None:
    symbols = parse_source("main.tsx", "import './index.css';\nimport React from 'react';\n")
    assert symbols.external == ("React",)
    assert set(symbols.modules) == {"./index.css", "react"}


def test_javascript_require_destructuring() -> None:
    text = (
        "const { readFile, writeFile: write } = require('fs');\n"
        'let {\n  joinPath,\n} = require("./paths");\n'
        "const express = require('express');\n"
    )
    symbols = parse_source("server.js", text)
    assert symbols.language == "javascript"
    assert symbols.imported == ("joinPath",)  # node's own `fs` is not the project
    assert symbols.modules == ("./paths",)
    assert "express" in symbols.defined


# --- Go -------------------------------------------------------------------------------------


def test_go_file_from_the_corpus() -> None:
    symbols = parse_source("shipit/internal/k8s/apply.go", APPLY_GO)
    assert symbols.language == "go"
    assert symbols.defined == ("LoadOrphanedManifest", "WarmFallbackManifest")
    assert "SettleSignedRelease" in symbols.imported
    assert set(symbols.imported) == {"SettleSignedRelease"}  # not context.Context, fmt.Errorf
    assert set(symbols.modules) == {"github.com/shipit-dev/shipit/pkg/api"}


def test_go_declarations() -> None:
    text = (
        "package rollout\n"
        "\n"
        "func (s *Server) HandleRollback(w http.ResponseWriter) {}\n"
        "func (Server) healthCheck() {}\n"
        "func NewServer() *Server { return nil }\n"
        "type Server struct{}\n"
        "const MaxSurge = 3\n"
        "var defaultTimeout = time.Second\n"
        "type (\n"
        "\tRolloutID string\n"
        "\tPhase = string\n"
        ")\n"
        "const (\n"
        '\tPhasePending Phase = "pending"\n'
        '\tphaseDone = "done"\n'
        ")\n"
    )
    symbols = parse_source("rollout.go", text)
    assert set(symbols.defined) == {
        "HandleRollback",
        "healthCheck",
        "NewServer",
        "Server",
        "MaxSurge",
        "defaultTimeout",
        "RolloutID",
        "Phase",
        "PhasePending",
        "phaseDone",
    }


def test_go_single_and_aliased_imports() -> None:
    text = (
        "package main\n"
        'import "github.com/shipit-dev/shipit/pkg/api"\n'
        'import kube "k8s.io/client-go/kubernetes"\n'
        'import _ "embed"\n'
        "func main() {\n"
        "\tapi.SettleSignedRelease(nil)\n"
        "\tkube.NewForConfig(nil)\n"
        "\tkubernetes.NotUsedByThisName(nil)\n"  # the package is known as kube here
        "\tapi.lowercaseHelper()\n"  # not exported: not a name of the package's API
        "}\n"
    )
    symbols = parse_source("main.go", text)
    assert symbols.imported == ("SettleSignedRelease", "NewForConfig")
    assert set(symbols.modules) == {
        "github.com/shipit-dev/shipit/pkg/api",
        "k8s.io/client-go/kubernetes",
    }


def test_go_packages_with_a_major_version_in_their_path() -> None:
    text = (
        "package main\n"
        "import (\n"
        '\t"github.com/go-chi/chi/v5"\n'
        '\t"gopkg.in/yaml.v3"\n'
        '\t"k8s.io/api/core/v1"\n'
        ")\n"
        "func main() { chi.NewRouter(); yaml.Marshal(nil); _ = v1.PodSpec{} }\n"
    )
    symbols = parse_source("main.go", text)
    assert set(symbols.imported) == {"NewRouter", "Marshal", "PodSpec"}


def test_go_without_imports_has_no_imported_names() -> None:
    symbols = parse_source("x.go", "package x\nfunc Compute() int { return fmt.Sprint() }\n")
    assert symbols.imported == ()
    assert symbols.defined == ("Compute",)


# --- Any text ------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".py", ".ts", ".tsx", ".js", ".go"])
def test_long_runs_of_blank_lines_parse_quickly(suffix: str) -> None:
    # A pattern starting with `^\s*` over many blank lines takes quadratic time.
    text = "\n" * 20_000 + "(\n"
    started = time.perf_counter()
    parse_source("file" + suffix, text)
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize("suffix", [".py", ".ts", ".tsx", ".js", ".go", ".txt"])
@given(text=st.text())
def test_any_text_parses_to_names_of_three_or_more_characters(suffix: str, text: str) -> None:
    symbols = parse_source("file" + suffix, text)
    assert all(isinstance(name, str) and len(name) >= 3 for name in symbols.identifiers)
    assert all(isinstance(module, str) and module for module in symbols.modules)


def test_standard_library_names_are_not_project_identifiers() -> None:
    python = parse_source(
        "a.py",
        "from typing import Any\nfrom os.path import join\nfrom .models import Invoice\n"
        "from ledgerly.ledger import settle_account\n",
    )
    assert python.imported == ("Invoice", "settle_account")
    go = parse_source(
        "a.go",
        'package a\nimport (\n\t"fmt"\n\t"net/http"\n\t"github.com/x/shipit/pkg/api"\n)\n'
        "func Run() error { return fmt.Errorf(api.SettleRelease(http.StatusOK)) }\n",
    )
    assert go.imported == ("SettleRelease",)
    script = parse_source(
        "a.ts", "import { readFile } from 'node:fs';\nimport { join } from 'path';\n"
    )
    assert script.imported == () and script.external == ()
