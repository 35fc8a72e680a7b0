"""The project config file (``stef.toml`` / ``stef --config FILE``) and ``stef config``:
a daily job without flags, precedence flag > environment > file > default, paths read
from the file's folder, and a clear error naming the file and key for every mistake."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from stef.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "examples" / "logs.jsonl"
RULES = ROOT / "examples" / "rules.json"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding the example logs and rules, and no STEF_* variables."""
    for name in ("STEF_STORE", "STEF_CONFIG", "STEF_LLM_MODEL", "STEF_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("STEF_LLM_API_KEY", raising=False)
    monkeypatch.delenv("STEF_LLM_CONFIG", raising=False)
    shutil.copy(LOGS, tmp_path / "logs.jsonl")
    shutil.copy(RULES, tmp_path / "rules.json")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def _settings(*command: str, env: dict[str, str] | None = None) -> dict[str, dict]:
    code, out, err = _run("config", *command, "--json", env=env)
    assert code == 0, err
    return {s["key"]: s for s in json.loads(out)["settings"]}


DAILY = """\
store = "stef.db"
rules = "rules.json"

[eval]
output = "results.jsonl"
min_coverage = 0.8
progress = false
"""


def test_a_daily_job_is_stef_eval_logs_jsonl(project: Path) -> None:
    (project / "stef.toml").write_text(DAILY)
    code, out, err = _run("eval", "logs.jsonl")
    assert code == 0, err
    assert out == ""  # the evaluations went to results.jsonl, not stdout
    lines = (project / "results.jsonl").read_text().splitlines()
    assert len(lines) == 42
    # the rules file applied: its benign filter is excused, as with --rules
    first = json.loads(lines[0])
    assert "filter_benign" in {f["kind"] for f in first["findings"]}
    assert (project / "stef.db").exists()
    code, out, _ = _run("stats", "--json")  # the store of the file, for every command
    assert code == 0 and sum(r["records"] for r in json.loads(out)) == 42

    (project / "stef.toml").write_text(DAILY.replace("0.8", "0.9"))
    code, _, err = _run("eval", "logs.jsonl", "--force")
    assert code == 1
    assert "coverage 85.7% is below 90.0%" in err


def test_flag_beats_environment_beats_file_beats_default(project: Path) -> None:
    (project / "stef.toml").write_text('store = "file.db"\n[eval]\nprogress = false\n')
    args = ("eval", "logs.jsonl", "-o", "out.jsonl")
    assert _run(*args)[0] == 0
    assert _run(*args, env={"STEF_STORE": "env.db"})[0] == 0
    assert _run(*args, "--store", "flag.db", env={"STEF_STORE": "env.db"})[0] == 0
    assert sorted(p.name for p in project.glob("*.db")) == ["env.db", "file.db", "flag.db"]

    seen = _settings("eval", env={"STEF_STORE": "env.db"})
    assert seen["store"] == {"key": "store", "value": "env.db", "source": "env STEF_STORE"}
    assert seen["progress"] == {
        "key": "progress",
        "value": False,
        "source": f"{project / 'stef.toml'} [eval]",
    }
    assert seen["workers"] == {"key": "workers", "value": 1, "source": "default"}
    assert _settings("eval")["store"]["value"] == str(project / "file.db")


def test_judge_settings_yield_to_the_llm_environment(project: Path) -> None:
    (project / "stef.toml").write_text(
        '[judge]\njudge = "hybrid"\nmodel = "file-model"\napi_key = "sk-in-file"\n'
    )
    seen = _settings("eval", env={"STEF_LLM_MODEL": "env-model"})
    assert seen["judge"]["value"] == "hybrid"
    assert seen["model"] == {"key": "model", "value": "env-model", "source": "env STEF_LLM_MODEL"}
    assert seen["api_key"]["value"] == "[set]"  # never printed
    # `stef local serve --model` is another option: [judge] does not reach it
    assert _settings("local", "serve")["model"]["source"] == "default"
    assert _settings("watch")["judge"]["value"] == "hybrid"


def test_config_file_elsewhere_reads_its_paths_from_its_own_folder(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("ci")
    shutil.copy(RULES, elsewhere / "ci-rules.json")
    conf = elsewhere / "stef-ci.toml"
    conf.write_text('rules = "ci-rules.json"\nstore = "postgresql://bot:pw@db.example/evals"\n')
    for args, env in (
        (("--config", str(conf), "config", "eval", "--json"), None),
        (("config", "eval", "--json"), {"STEF_CONFIG": str(conf)}),
    ):
        code, out, err = _run(*args, env=env)
        assert code == 0, err
        data = json.loads(out)
        assert data["config_file"] == str(conf)
        seen = {s["key"]: s for s in data["settings"]}
        assert seen["rules"]["value"] == str(elsewhere / "ci-rules.json")
        assert seen["store"]["value"] == "postgresql://db.example/evals"  # no password shown


def test_stef_config_lists_each_setting_with_its_source_and_commands(project: Path) -> None:
    code, out, _ = _run("config")
    assert code == 0
    assert out.splitlines()[0] == (
        f"config file: none (stef.toml is not in {project}; --config FILE or STEF_CONFIG name one)"
    )
    (project / "stef.toml").write_text('workers = 2\n[watch]\nalerts = "alerts.json"\n')
    code, out, _ = _run("config", "--json")
    rows = json.loads(out)["settings"]
    assert rows == [
        {
            "key": "alerts",
            "value": str(project / "alerts.json"),
            "source": f"{project / 'stef.toml'} [watch]",
            "commands": ["watch"],
        },
        {
            "key": "workers",
            "value": 2,
            "source": str(project / "stef.toml"),
            "commands": ["calibrate", "eval", "precision", "selftest"],
        },
    ]
    code, out, _ = _run("config")
    assert out.splitlines()[0] == f"config file: {project / 'stef.toml'} (./stef.toml)"
    assert "calibrate, eval, precision, selftest" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('workers = "four"\n', 'workers: must be an integer, got string \'four\''),
        ("workers = 2.5\n", "workers: must be an integer, got number 2.5"),
        ("workers = 0\n", "workers: Invalid value for '-w' / '--workers': 0 is not in the range"),
        ("worker = 2\n", "worker: unknown top-level key; did you mean 'workers'?"),
        ("min_coverage = 0.8\n", "a command's own option goes in its table (e.g. [eval]"),
        ("[eval]\nmin-coverge = 0.8\n", "[eval] min_coverge: `stef eval` has no option "
         "--min-coverge; did you mean 'min_coverage'?"),
        ("[evall]\nforce = true\n", "[evall]: no such command; did you mean 'eval'?"),
        ("[judge]\nmodl = 'x'\n", "[judge] modl: unknown judge option; did you mean 'model'?"),
        ("[judge]\njudge = 'gpt'\n", "[judge] judge: Invalid value for '--judge': 'gpt' is not"),
        ("[eval]\nprogress = 'yes'\n", "[eval] progress: must be true or false, got string 'yes'"),
        ("[store]\nstore = 'x.db'\n", "[store]: `stef store` is a group of commands"),
        ("[eval]\ncalibration = 'none.json'\n", "[eval] calibration: Invalid value for "
         "'--calibration': File"),
        ("store = [\n", "not valid TOML"),
    ],
)  # fmt: skip
def test_a_mistake_in_the_file_names_the_file_and_key(
    project: Path, text: str, message: str
) -> None:
    (project / "stef.toml").write_text(text)
    code, _, err = _run("eval", "logs.jsonl", "-o", "out.jsonl")
    assert code == 2
    assert err.startswith(f"Error: {project / 'stef.toml'}: ")
    assert message in err
    assert not (project / "out.jsonl").exists()  # refused before any record
    code, _, err = _run("config")  # `stef config` checks the whole file
    assert code == 2 and message in err


def test_a_named_config_file_that_does_not_exist_is_refused(project: Path) -> None:
    code, _, err = _run("--config", "nothere.toml", "stats")
    assert (code, err) == (2, "Error: --config nothere.toml: no such file\n")
    code, _, err = _run("stats", env={"STEF_CONFIG": "nothere.toml"})
    assert (code, err) == (2, "Error: STEF_CONFIG nothere.toml: no such file\n")


def test_a_subcommand_of_a_group_takes_the_top_level_keys(project: Path) -> None:
    (project / "stef.toml").write_text('store = "kept.db"\n')
    assert _run("eval", "logs.jsonl", "-o", "o.jsonl", "--no-progress")[0] == 0
    code, out, _ = _run("store", "prune", "--before", "2030-01-01", "--dry-run")
    assert code == 0
    assert out == "would prune 42 evaluation(s) recorded before 2030-01-01T00:00:00Z\n"
    assert _settings("store", "prune")["store"]["value"] == str(project / "kept.db")
