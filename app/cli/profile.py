"""`engram profile`: the personal profile, kept and used only with consent."""

from __future__ import annotations

import click

from app.cli.common import (
    CliState,
    cli,
    emit_json,
    handle_errors,
    json_option,
    pass_state,
    say,
    stdin_is_terminal,
)


@cli.group()
def profile() -> None:
    """Your profile (style, languages, frameworks, goals…), used only with consent.

    Turn consent on with `engram profile consent on`; turning it off deletes the
    profile and its vectors."""


def _fields_choice() -> click.Choice[str]:
    from services.knowledge.profile import PROFILE_FIELDS

    return click.Choice([key for key, _ in PROFILE_FIELDS])


@profile.command(name="show")
@json_option
@pass_state
@handle_errors
def show(state: CliState, as_json: bool) -> None:
    """Show the profile and whether it may be used."""
    from services.knowledge.profile import ProfileStore, render_profile

    engram = state.engram(catch_up=False)
    consent = engram.settings.get_bool("profile.consent")
    fields = ProfileStore(engram.service).load()
    if as_json:
        emit_json({"consent": consent, "fields": fields})
        return
    say(f"consent: {'on' if consent else 'off'}")
    say(render_profile(fields) or "(no profile)")


@profile.command(name="set")
@click.argument("field", type=_fields_choice())
@click.argument("text")
@pass_state
@handle_errors
def set_field(state: CliState, field: str, text: str) -> None:
    """Set one field of the profile (empty text clears it). Needs consent."""
    from services.knowledge.profile import ProfileStore

    engram = state.engram(catch_up=False)
    store = ProfileStore(engram.service)
    fields = store.load()
    fields[field] = text
    store.save(fields, engram.settings.get_bool("profile.consent"))
    say(f"saved {field}")


@profile.command(name="consent")
@click.argument("switch", type=click.Choice(["on", "off"]))
@click.option("--yes", is_flag=True, help="Do not ask before deleting the profile.")
@pass_state
@handle_errors
def consent(state: CliState, switch: str, yes: bool) -> None:
    """Allow (on) or revoke (off) the profile. Revoking deletes it and its vectors; it
    asks on a terminal, and without one (a pipe, a script) it needs --yes."""
    from services.knowledge.profile import ProfileStore

    engram = state.engram(catch_up=False)
    if switch == "on":
        engram.settings.set("profile.consent", True)
        say("profile consent on: the profile may be kept and put into context")
        return
    if not yes:
        if not stdin_is_terminal():
            raise click.UsageError(
                "not on a terminal, so the profile was kept: add --yes to revoke consent "
                "and delete it without asking"
            )
        click.confirm("Revoke consent and delete your profile?", default=False, abort=True)
    ProfileStore(engram.service).revoke()
    engram.settings.set("profile.consent", False)
    say("profile consent off: the profile and its vectors were deleted")
