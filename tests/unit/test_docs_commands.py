"""Every shell block of README.md and docs/ is run by a named test, or says why not.

A new or moved block fails here until it is listed: RUN names the test that runs it as
written (most in tests/integration/test_docs_run.py, which also compares the output the
doc shows), NOT_RUN gives the reason. A reason that names a test file names one that
exists. The Python blocks have the same registry in test_docs_examples.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHELL = ("bash", "console", "sh", "shell")
DOCS_RUN = "tests/integration/test_docs_run.py"

pytestmark = pytest.mark.docs

_INSTALL = ("an install command: tests/unit/test_docs_install_commands.py checks that it names what exists "
            "here, pinned as constraints.txt pins it; CI installs the same packages (scripts/install.sh --test)")
_VERL_TRAINER = ("launches verl's trainer (GPUs, a model, a dataset): "
                 "tests/integration/test_integrations_verl_manager.py runs verl's RewardLoopManager with these "
                 "reward settings")

# (doc, index among its shell blocks) -> (first line, the test that runs it: FILE::NAME)
RUN = {
    ("README.md", 2): ("verl-rewards list", f"{DOCS_RUN}::test_readme_list_and_show_print_the_rows_shown"),
    ("README.md", 3): ("verl-rewards new my_reward",
                       f"{DOCS_RUN}::test_readme_new_plugin_steps_work_as_shown_in_a_fresh_venv"),
    ("README.md", 4): ("cat > samples.jsonl <<'EOF'",
                       f"{DOCS_RUN}::test_readme_quickstart_scores_the_file_and_prints_what_it_shows"),
    ("README.md", 5): ("verl-rewards score -i generated.parquet -o scored.parquet reward.plugin=verl_default",
                       "tests/integration/test_verl_data_files.py::"
                       "test_score_reads_verls_file_with_no_flags_one_row_per_response"),
    ("README.md", 6): ("python -m trainer.main trainer.total_steps=50 trainer.output_dir=outputs/quickstart \\",
                       f"{DOCS_RUN}::test_readme_trainer_runs_print_the_figures_the_readme_quotes"),
    ("README.md", 9): ("$ verl-rewards audit gameable", f"{DOCS_RUN}::test_readme_audit_prints_what_it_shows"),
    ("docs/cli.md", 0): ("$ verl-rewards list", f"{DOCS_RUN}::test_cli_md_list_shows_rows_the_listing_has"),
    ("docs/cli.md", 1): ("$ verl-rewards show exact_match", f"{DOCS_RUN}::test_cli_md_transcripts_run_as_shown"),
    ("docs/cli.md", 2): ("$ verl-rewards check gsm8k think_answer_format",
                         f"{DOCS_RUN}::test_cli_md_transcripts_run_as_shown"),
    ("docs/cli.md", 3): ("$ cat > samples.jsonl <<'EOF'", f"{DOCS_RUN}::test_cli_md_transcripts_run_as_shown"),
    ("docs/cli.md", 8): ("$ verl-rewards score -i nope.jsonl -o out.jsonl reward.plugin=exact_match",
                         f"{DOCS_RUN}::test_cli_md_transcripts_run_as_shown"),
    ("docs/integrations/verl.md", 0): ("verl-rewards new my_reward",
                                       "tests/integration/test_verl_migration.py::"
                                       "test_the_migration_section_as_written_gives_the_same_scores"),
    ("docs/writing-a-plugin.md", 2): ("$ verl-rewards audit gameable",
                                      "tests/unit/test_cli_audit.py::"
                                      "test_the_audit_shown_in_writing_a_plugin_is_what_audit_prints"),
}

# (doc, index) -> (first line, why it is not run as written). Keep the reasons honest.
NOT_RUN = {
    ("README.md", 0): ("# 1. Install and run the demo: a small GRPO run on Ray whose reward comes from a plugin",
                       "CI's own first steps (.ci/run: scripts/install.sh --test, then pytest); the 500-step demo "
                       "takes 1.5-3 min, so tests/integration/test_trainer_learns.py trains 250 steps of it and "
                       "the demo's figures are one measured run"),
    ("README.md", 1): ("source .venv/bin/activate",
                       "activates the venv in the reader's shell: test_docs_run.py runs every block with this "
                       "environment's scripts first on PATH, as activating does"),
    ("README.md", 7): ("VERL_REWARDS_TOKEN=s3cret verl-rewards serve --host 0.0.0.0 reward.plugin=gsm8k "
                       "reward.num_workers=8",
                       "a service that runs until stopped: tests/integration/test_serve.py starts "
                       "`verl-rewards serve` and drives each protocol"),
    ("README.md", 8): ("$ verl-rewards list                      # installed plugins; imports none of them",
                       "a synopsis of the commands, each run by docs/cli.md's transcripts "
                       "(tests/integration/test_docs_run.py) and the CLI tests"),
    ("README.md", 10): (".venv/bin/python benchmarks/bench_executors.py        # executors (~1 min)",
                        "benchmarks: each measures for minutes and prints figures, which the table above "
                        "quotes as measured; these are the commands to measure again"),
    ("README.md", 11): ("bash scripts/install.sh --test   # .venv, editable, plus the test tools, peer trainers "
                        "and test plugins", "CI's own commands (.ci/run)"),
    ("docs/cli.md", 4): ("$ verl-rewards -v score -i samples.jsonl -o scored.jsonl reward.path=my_reward.py "
                         "reward.executor=local",
                         "the reader's own reward file (/home/me/my_reward.py): tests/unit/test_cli_small_paths.py "
                         "and tests/integration/test_cli_console.py check what -v prints"),
    ("docs/cli.md", 5): ("$ verl-rewards score -i big.jsonl -o scored.jsonl reward.plugin=gsm8k",
                         "needs a Ctrl-C in the middle of a run: tests/integration/test_cli_score_stream.py "
                         "interrupts real runs and resumes them"),
    ("docs/cli.md", 6): ("$ cat > reward.yaml <<'EOF'",
                         "shows a config file's shape (no output shown): tests/unit/test_cli_score.py scores "
                         "with --config and overrides"),
    ("docs/cli.md", 7): ("$ verl-rewards score -i samples.jsonl -o scored.jsonl reward.plugin=slow_cpu \\",
                         "starts a Ray pool of two workers: tests/integration/test_cli_score_ray.py scores on one"),
    ("docs/cli.md", 9): ("$ verl-rewards score -i other.jsonl -o scored.jsonl reward.plugin=exact_match",
                         "needs another run writing the same output at that moment: "
                         "tests/integration/test_cli_score_claim.py runs two at once"),
    ("docs/cli.md", 10): ("$ verl-rewards new my_reward",
                          "tests/integration/test_cli_new.py runs the printed next steps from a temporary "
                          "directory and from this checkout"),
    ("docs/cli.md", 11): ("$ verl-rewards audit gsm8k",
                          "audits gsm8k for a minute: tests/integration/test_audit.py audits it (and the other "
                          "answer checkers) and expects nothing found"),
    ("docs/cli.md", 12): ('$ verl-rewards audit declared_attack --accept "declared adversarial example 1"',
                          "tests/unit/test_cli_audit.py runs a finding accepted on the command line"),
    ("docs/cli.md", 13): ("$ verl-rewards audit random_score --json",
                          "its scores are random, so the figures differ every run: tests/unit/test_cli_audit.py "
                          "checks the JSON's shape"),
    ("docs/cli.md", 14): ("$ verl-rewards serve reward.plugin=gsm8k reward.num_workers=4",
                          "a service that runs until stopped: tests/integration/test_serve.py"),
    ("docs/cli.md", 15): ("$ verl-rewards serve reward.plugin=gsm8k --tasks train.parquet --tasks test=test.jsonl",
                          "a service that runs until stopped: tests/integration/test_serve_ors.py serves task "
                          "files"),
    ("docs/integrations/areal.md", 0): ('pip install --no-deps "areal==1.0.4" -c constraints.txt', _INSTALL),
    ("docs/integrations/openrlhf.md", 0): ("export VERL_REWARDS_PLUGIN=gsm8k",
                                           "launches OpenRLHF's trainer (GPUs): "
                                           "tests/integration/test_integrations_openrlhf_peer.py runs OpenRLHF's "
                                           "own reward-file loader on this file"),
    ("docs/integrations/openrlhf.md", 1): ('ray job submit --address="http://127.0.0.1:8265" \\',
                                           "submits to a running Ray cluster with GPUs: "
                                           "tests/integration/test_integrations_openrlhf_ray.py"),
    ("docs/integrations/openrlhf.md", 2): ("export VERL_REWARDS_CONFIG='{\"rewards\": {\"correct\": {\"plugin\": "
                                           "\"gsm8k\"}, \"format\": {\"plugin\": \"think_answer_format\", "
                                           "\"weight\": 0.2}}}'",
                                           "an environment setting for OpenRLHF's trainer: "
                                           "tests/unit/test_integrations_openrlhf.py reads sections from it"),
    ("docs/integrations/openrlhf.md", 3): ('pip install --no-deps "openrlhf==0.11.2" -c constraints.txt', _INSTALL),
    ("docs/integrations/slime.md", 0): ("export VERL_REWARDS_PLUGIN=gsm8k              # or "
                                        "VERL_REWARDS_CONFIG='{\"plugin\": \"gsm8k\", \"timeout_s\": 10}'",
                                        "launches slime's trainer (GPUs, Megatron): "
                                        "tests/integration/test_integrations_slime.py calls the reward as slime does"),
    ("docs/integrations/trl.md", 0): ("VERL_REWARDS_TOKEN=s3cret verl-rewards serve reward.plugin=gsm8k "
                                      "reward.num_workers=4 \\",
                                      "a service that runs until stopped: tests/integration/test_serve_ors.py serves "
                                      "tasks and drives TRL's OpenReward client against it"),
    ("docs/integrations/trl.md", 1): ('pip install "trl==1.16.0" "torch==2.13.0" -c constraints.txt   # or the '
                                      "CUDA build of torch your GPUs need", _INSTALL),
    ("docs/integrations/trl.md", 2): (".venv/bin/python -m pytest tests/integration/test_integrations_trl_grpo.py "
                                      "tests/unit/test_integrations_trl.py", "part of the suite CI runs"),
    ("docs/integrations/verifiers.md", 0): ('pip install --no-deps "verifiers==0.4.0" -c constraints.txt', _INSTALL),
    ("docs/integrations/verl.md", 1): ('python -m verl.trainer.main_ppo --config-path="$PWD" --config-name=my_ppo \\',
                                       "launches verl's trainer (GPUs, a model, a dataset): "
                                       "tests/integration/test_verl_migration.py composes the config this command "
                                       "reads, as main_ppo's @hydra.main does, and scores with it in verl's "
                                       "reward-loop worker"),
    ("docs/integrations/verl.md", 2): ('pip install "torch==2.13.0" -c constraints.txt      # or the CUDA build of '
                                       "it your GPUs need", _INSTALL),
    ("docs/integrations/verl.md", 3): ("python -m verl.trainer.main_ppo \\", _VERL_TRAINER),
    ("docs/integrations/verl.md", 4): ("python -m verl.trainer.main_ppo \\", _VERL_TRAINER),
    ("docs/integrations/verl.md", 5): ("custom_reward_function.path=$(python -c 'import "
                                       "verl_rewards.integrations.verl as m; print(m.__file__)')",
                                       "a setting for older verl releases, not a command: "
                                       "tests/integration/test_integrations_verl_workers.py loads the module by "
                                       "its file path as verl does"),
    ("docs/model-rewards.md", 0): ('pip install "torch==2.13.0"              # first: the version the tests run (for '
                                   "a GPU, its build for your CUDA)", _INSTALL),
    ("docs/model-rewards.md", 1): ("verl-rewards score -i rollouts.jsonl -o scored.jsonl -c reward.yaml   # rows "
                                   "with a prompt column",
                                   "needs a judge server or a reward model checkpoint: "
                                   "tests/integration/test_models_ray.py scores with both, built in code"),
    ("docs/model-rewards.md", 2): ("CUDA_VISIBLE_DEVICES=1 vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000 "
                                   "--max-num-seqs 128", "serves a 7B model on a GPU"),
    ("docs/serve.md", 0): ("pip install -e '.[serve]' -e ./plugins/math       # from the checkout: aiohttp + "
                           "prometheus_client", _INSTALL),
    ("docs/serve.md", 1): ("verl-rewards serve --dev reward.plugin=gsm8k reward.executor=local",
                           "the service the curl examples below talk to: tests/integration/test_serve_docs.py "
                           "starts it so, and runs each of them"),
    ("docs/serve.md", 2): ('$ curl -s localhost:8000/v1/score -H "Authorization: Bearer $VERL_REWARDS_TOKEN" '
                           "-d '{\"samples\": [", "run as written by tests/integration/test_serve_docs.py"),
    ("docs/serve.md", 3): ("export VERL_REWARDS_TOKEN=...        # the client's token",
                           "a client's setting: tests/integration/test_serve.py scores through a client with a "
                           "token"),
    ("docs/serve.md", 4): ("$ verl-rewards score -i in.jsonl -o out.jsonl -c client.yaml "
                           "reward.remote_url=http://10.0.0.5:8000",
                           "needs a service at that address: tests/integration/test_remote.py scores through "
                           "reward.remote_url"),
    ("docs/serve.md", 5): ("python -m openrlhf.cli.train_ppo_ray ... \\", "launches OpenRLHF's trainer (GPUs)"),
    ("docs/serve.md", 6): ('$ curl -s "localhost:8000/openrlhf?token=$VERL_REWARDS_TOKEN" -d \'{"query": '
                           '["<|im_start|>user\\nHow many?<|im_end|>\\n<|im_start|>assistant\\n#### 72<|im_end|>"],',
                           "run as written by tests/integration/test_serve_docs.py"),
    ("docs/serve.md", 7): ('python train.py ... --rm-type remote_rm --rm-url '
                           '"http://10.0.0.5:8000/slime?token=$VERL_REWARDS_TOKEN"', "launches slime's trainer (GPUs)"),
    ("docs/serve.md", 8): ('$ curl -s "localhost:8000/slime?token=$VERL_REWARDS_TOKEN" -d \'{"prompt": "How many?", '
                           '"response": "#### 72", "label": "72"}\'',
                           "run as written by tests/integration/test_serve_docs.py"),
    ("docs/serve.md", 9): ('$ curl -s localhost:8000/nemo_gym/verify -H "Authorization: Bearer '
                           "$VERL_REWARDS_TOKEN\" -d '{", "run as written by tests/integration/test_serve_docs.py"),
    ("docs/serve.md", 10): ("pip install -e '.[serve,ors]' -e ./plugins/math", _INSTALL),
    ("docs/serve.md", 11): ("# on each of node-a, node-b (joined to the cluster at head:6379)",
                            "needs a Ray cluster of several nodes: tests/integration/test_shared_pool.py shares "
                            "one pool between front ends"),
    ("docs/skip.md", 0): ("python -m verl.trainer.main_ppo \\",
                          "launches verl's trainer (GPUs): tests/integration/test_integrations_verl_skip.py runs "
                          "verl's agent loop with on_error: skip"),
    ("docs/trainer.md", 0): ("pip install '.[trainer]' ./examples/toy_plugin   # verl-rewards with torch, and the "
                             "default reward (scripts/install.sh does this)", _INSTALL),
    ("docs/writing-a-plugin.md", 0): ("pip install ./my-rewards                                  # verl-rewards "
                                      "already installed here", _INSTALL),
    ("docs/writing-a-plugin.md", 1): ("# from a checkout: the framework, then the first-party plugins you want",
                                      _INSTALL),
}


def _shell_blocks() -> dict[tuple[str, int], str]:
    docs = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))]
    found = {}
    for doc in docs:
        shell = [text for language, text in re.findall(r"```([a-z]*)\n(.*?)```", (ROOT / doc).read_text(), flags=re.S)
                 if language in SHELL]
        found.update({(doc, i): text.splitlines()[0].strip() for i, text in enumerate(shell)})
    return found


def test_every_shell_block_is_run_or_says_why_not():
    listed = {**{k: first for k, (first, _) in RUN.items()}, **{k: first for k, (first, _) in NOT_RUN.items()}}
    assert set(RUN).isdisjoint(NOT_RUN)
    assert _shell_blocks() == listed


@pytest.mark.parametrize("key", sorted(RUN), ids=lambda k: f"{k[0]}[{k[1]}]")
def test_the_test_that_runs_a_block_exists(key):
    path, name = RUN[key][1].split("::")
    assert re.search(rf"^def {name}\(", (ROOT / path).read_text(), flags=re.M), RUN[key][1]


@pytest.mark.parametrize("key", sorted(NOT_RUN), ids=lambda k: f"{k[0]}[{k[1]}]")
def test_a_reason_names_test_files_that_exist(key):
    for path in re.findall(r"tests/[\w/]+\.py", NOT_RUN[key][1]):
        assert (ROOT / path).is_file(), path
