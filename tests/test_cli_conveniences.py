"""What a new user looks for first: shell completion, and a progress bar on the long
``stef fit-judge`` (rows aligned, then fits done)."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from stef.cli.main import main

FIT_DATA = Path(__file__).parent / "fixtures" / "fit" / "nl2sql_bugs_240.jsonl"


def test_bash_completion_script_is_produced_and_completes_commands_and_choices() -> None:
    runner = CliRunner()
    script = runner.invoke(main, [], prog_name="stef", env={"_STEF_COMPLETE": "bash_source"})
    assert script.exit_code == 0
    assert "complete -o nosort -F _stef_completion stef" in script.output
    for shell in ("zsh_source", "fish_source"):
        other = runner.invoke(main, [], prog_name="stef", env={"_STEF_COMPLETE": shell})
        assert other.exit_code == 0 and "_STEF_COMPLETE" in other.output

    def complete(words: str) -> list[str]:
        env = {
            "_STEF_COMPLETE": "bash_complete",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split(" ")) - 1),
        }
        return runner.invoke(main, [], prog_name="stef", env=env).output.splitlines()

    assert complete("stef ev") == ["plain,eval"]
    assert complete("stef li") == ["plain,list"]
    assert complete("stef eval --judge ") == [
        "plain,symbolic",
        "plain,openai",
        "plain,local",
        "plain,hybrid",
    ]


def test_fit_judge_shows_rows_aligned_and_fits_done(tmp_path: Path) -> None:
    args = ["fit-judge", str(FIT_DATA), "-o", str(tmp_path / "w.json"), "--folds", "3"]
    # FORCE_COLOR: rich takes stderr for a terminal, as a user's shell is
    result = CliRunner().invoke(main, [*args, "--c", "0.1", "--json"], env={"FORCE_COLOR": "1"})
    assert result.exit_code == 0, result.output
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", result.stderr).replace("\r", "\n")
    assert re.search(r"aligning rows .* 240/240", shown)
    assert re.search(r"fitting \(3 held-out folds, then all rows\) .* 4/4", shown)
    quiet = CliRunner().invoke(
        main, [*args, "--c", "0.1", "--json", "--no-progress"], env={"FORCE_COLOR": "1"}
    )
    assert quiet.exit_code == 0 and quiet.stderr == ""
