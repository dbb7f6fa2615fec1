"""The launchers that decide how many GPU processes a container starts, as tables of their flags.

Each entry says how the program is started (``vllm serve``, ``python -m sglang.launch_server``,
``torchrun``), how its flags that count processes are spelt (every alias the program's own
argument parser accepts), and where its options end. ``parse`` reads one shell command (from
gpulint.kube.commandline) against the table; it never guesses: a flag gpulint cannot read is
absent from the result, and the rules then stay silent.

Sources (the parsers these tables mirror):
- vLLM ``vllm/engine/arg_utils.py`` (EngineArgs.add_cli_args: ``--tensor-parallel-size/-tp``,
  ``--pipeline-parallel-size/-pp``, ``--data-parallel-size/-dp``, ``--data-parallel-size-local/-dpl``)
  and ``vllm/utils`` FlexibleArgumentParser (``--a_b`` is read as ``--a-b``); vLLM-Omni's ``--omni`` and
  ``--stage-configs-path`` (vllm_omni/entrypoints/cli/serve.py);
- SGLang ``python/sglang/srt/server_args.py`` (``--tensor-parallel-size/--tp-size``, ...);
- torchrun ``torch/distributed/run.py`` (``--nproc-per-node/--nproc_per_node``, ``--nnodes``,
  ``--node-rank/--node_rank``, ``--rdzv-backend/--rdzv_backend``; every option
  may come from ``PET_<NAME>`` through ``torch.distributed.argparse_util.env``);
- DeepSpeed ``deepspeed/launcher/runner.py`` (``--num_gpus/--num-gpus``);
- Open MPI ``mpirun`` (``-np/-n/--np/-c``, ``--oversubscribe``, ``-H/--host/--hostfile``, ``--allow-run-as-root``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from gpulint.kube.commandline import Command, Word, basename
from gpulint.kube.fields import counted

_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")
_PYTHON_VALUED = frozenset({"-W", "-X", "-Q"})
MAX_REST = 8  # words kept of what a launcher runs (its program and the first arguments)


@dataclass(frozen=True)
class Launcher:
    name: str  # as messages name it
    programs: tuple[tuple[str, ...], ...] = ()  # (program basename, subcommand ...)
    modules: tuple[str, ...] = ()  # python -m <module>
    flags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # canonical -> spellings
    env: Mapping[str, str] = field(default_factory=dict)  # canonical -> variable read when the flag is absent
    underscores: bool = False  # "--a_b" is "--a-b" (vLLM's FlexibleArgumentParser)
    options_end_at_positional: bool = False  # the first positional is the program it runs
    switches: frozenset[str] = frozenset()  # options that take no value
    pairs: frozenset[str] = frozenset()  # options that take two values (mpirun --mca key value)

    @cached_property  # built once per launcher, not per command parsed
    def spelt(self) -> tuple[dict[str, str], frozenset[str]]:
        """Each spelling of its flags as its parser reads it -> the canonical flag, and its switches so spelt."""
        lookup = {
            _spelling(self, spelling): canonical
            for canonical, spellings in self.flags.items()
            for spelling in spellings
        }
        return lookup, frozenset(_spelling(self, s) for s in self.switches)


VLLM = Launcher(
    "vLLM",
    programs=(("vllm", "serve"),),
    modules=("vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server"),
    flags={
        "tensor-parallel-size": ("--tensor-parallel-size", "-tp"),
        "pipeline-parallel-size": ("--pipeline-parallel-size", "-pp"),
        "data-parallel-size": ("--data-parallel-size", "-dp"),
        "data-parallel-size-local": ("--data-parallel-size-local", "-dpl"),
        "distributed-executor-backend": ("--distributed-executor-backend",),
        "nnodes": ("--nnodes",),
        "config": ("--config",),
        "omni": ("--omni",),
        "stage-configs-path": ("--stage-configs-path",),
    },
    underscores=True,
    switches=frozenset({"--headless", "--trust-remote-code", "--enforce-eager", "--enable-expert-parallel", "--omni"}),
)
SGLANG = Launcher(
    "SGLang",
    modules=("sglang.launch_server",),
    flags={
        "tensor-parallel-size": ("--tensor-parallel-size", "--tp-size", "--tp"),
        "pipeline-parallel-size": ("--pipeline-parallel-size", "--pp-size"),
        "data-parallel-size": ("--data-parallel-size", "--dp-size"),
        "nnodes": ("--nnodes",),
        "enable-dp-attention": ("--enable-dp-attention",),
        "config": ("--config",),
    },
    switches=frozenset({"--enable-dp-attention", "--trust-remote-code"}),
)
TORCHRUN = Launcher(
    "torchrun",
    programs=(("torchrun",),),
    modules=("torch.distributed.run", "torch.distributed.launch"),
    flags={
        "nproc-per-node": ("--nproc-per-node", "--nproc_per_node"),
        "nnodes": ("--nnodes",),
        "node-rank": ("--node-rank", "--node_rank"),
        "rdzv-backend": ("--rdzv-backend", "--rdzv_backend"),
        "master-addr": ("--master-addr", "--master_addr"),
        "rdzv-endpoint": ("--rdzv-endpoint", "--rdzv_endpoint"),
    },
    env={"nproc-per-node": "PET_NPROC_PER_NODE"},
    options_end_at_positional=True,
    switches=frozenset(
        {
            "--standalone",
            "--no-python",
            "--no_python",
            "--run-path",
            "--run_path",
            "--module",
            "-m",
            "--use-env",
            "--use_env",
        }
    ),
)
DEEPSPEED = Launcher(
    "DeepSpeed",
    programs=(("deepspeed",),),
    flags={
        "num-gpus": ("--num_gpus", "--num-gpus"),
        "include": ("--include", "-i"),
        "exclude": ("--exclude", "-e"),
        "master-addr": ("--master_addr", "--master-addr"),
    },
    options_end_at_positional=True,
    switches=frozenset(
        {
            "--no_python",
            "--no_local_rank",
            "--no_ssh_check",
            "--no_ssh",
            "--force_multi",
            "--elastic_training",
            "--bind_cores_to_rank",
            "--save_pid",
            "--module",
            "--autotuning",
        }
    ),
)
MPIRUN = Launcher(
    "mpirun",
    programs=(("mpirun",), ("mpiexec",), ("orterun",), ("prterun",)),
    flags={
        "np": ("-np", "-n", "--np", "-c"),
        "host_list": ("-H", "--host", "-host"),  # host[:slots],... (one slot a host unless :N; repeats add up)
        "hosts": (
            "--hostfile",
            "-hostfile",
            "--machinefile",
            "-machinefile",
            "--default-hostfile",
        ),
        "oversubscribe": ("--oversubscribe", "-oversubscribe"),
        "run_as_root": ("--allow-run-as-root", "-allow-run-as-root"),  # Open MPI's own: MPICH's hydra has none
        # ranks per node or per socket, whatever the hostfile's slots say
        "per_node": ("-npernode", "--npernode", "-N", "-npersocket", "--npersocket"),
        "map_by": ("--map-by", "-map-by"),  # ppr:N:node places N ranks per node
    },
    options_end_at_positional=True,
    switches=frozenset(
        {
            "--oversubscribe",
            "-oversubscribe",
            "--allow-run-as-root",
            "-allow-run-as-root",
            "--report-bindings",
            "-report-bindings",
            "-q",
            "--quiet",
            "-v",
            "--verbose",
            "--tag-output",
            "-tag-output",
            "--timestamp-output",
            "--display-map",
            "-display-map",
            "--bind-to-core",
            "--noprefix",
            "--use-hwthread-cpus",
        }
    ),
    pairs=frozenset({"--mca", "-mca", "--gmca", "-gmca"}),
)
# Ray's CLI (python/ray/scripts/scripts.py, `ray start`): --num-gpus is the GPU count the node advertises to
# Ray's scheduler, detected from the visible GPUs when absent; --address the head a worker joins (host:port).
RAY = Launcher(
    "Ray",
    programs=(("ray", "start"),),
    flags={"num-gpus": ("--num-gpus",), "address": ("--address",)},
    switches=frozenset({"--head", "--block", "--disable-usage-stats"}),
)
LAUNCHERS: tuple[Launcher, ...] = (VLLM, SGLANG, TORCHRUN, DEEPSPEED, MPIRUN, RAY)


@dataclass(frozen=True)
class Launch:
    """One recognised launcher invocation: the value word of each flag given (the last one wins)."""

    launcher: Launcher
    program: Word | None  # None: the image's entrypoint
    values: dict[str, Word]  # canonical flag -> its value (a switch's value is its own word)
    assignments: Mapping[str, str | None]  # VAR=value written in front of the command
    rest: tuple[str | None, ...] = ()  # the words after the launcher's options (MAX_REST): what it runs
    # A word gpulint cannot read stands where a flag may be ($(EXTRA_ARGS), `$ARGS`): an absent flag is then
    # not known to be absent, and its launcher's default is not known to apply.
    opaque: bool = False

    def number(self, flag: str) -> int | None:
        """The flag's value as a positive integer; None when absent, unresolved or not a number."""
        word = self.values.get(flag)
        if word is None or word.text is None:
            return None
        value = word.text.strip()
        return counted(value)

    def has(self, flag: str) -> bool:
        return flag in self.values

    def absent(self, flag: str) -> bool:
        """The flag is known not to be given (so the launcher's default applies)."""
        return flag not in self.values and not self.opaque


def _program_start(words: tuple[Word, ...]) -> tuple[Launcher, int] | None:
    """The launcher the command starts and the index of its first own argument."""
    if not words or words[0].text is None:
        return None
    program = basename(words[0].text)
    if _PYTHON.fullmatch(program):
        index = 1
        while index < len(words) and words[index].text is not None and words[index].text.startswith("-"):  # type: ignore[union-attr]
            option = words[index].text
            if option == "-m":
                module = words[index + 1].text if index + 1 < len(words) else None
                for launcher in LAUNCHERS:
                    if module in launcher.modules:
                        return launcher, index + 2
                return None
            if option == "-c":
                return None
            index += 2 if option in _PYTHON_VALUED else 1
        return None
    for launcher in LAUNCHERS:
        for prefix in launcher.programs:
            if program == prefix[0] and all(
                index < len(words) and words[index].text == part for index, part in enumerate(prefix[1:], 1)
            ):
                return launcher, len(prefix)
    return None


def _spelling(launcher: Launcher, option: str) -> str:
    if launcher.underscores and option.startswith("--"):
        return option.replace("_", "-")
    return option


def parse(command: Command, entrypoint: Launcher | None = None) -> Launch | None:
    """The launcher ``command`` runs, with its flags; ``entrypoint``: the image's entrypoint when
    the words are only its arguments (a container without ``command``)."""
    words = command.words
    if entrypoint is not None:
        launcher, start = entrypoint, 0
        program: Word | None = None
    else:
        found = _program_start(words)
        if found is None:
            return None
        launcher, start = found
        program = words[0]
    lookup, switches = launcher.spelt
    values: dict[str, Word] = {}
    opaque = False
    # `vllm serve MODEL ...`: the first argument is the model, not a flag
    model_first = program is not None and program.text is not None and basename(program.text) == "vllm"
    index = start
    after_option = False  # the word before is an option gpulint does not know, which may take this one
    while index < len(words):
        word = words[index]
        token = word.text
        if token is None:
            flag = _unresolved_flag(launcher, word)
            if flag is not None:
                values[flag] = word  # --tensor-parallel-size=$(TP): given, its value unknown
            elif "=" not in word.prefix and not after_option and not (index == start and model_first):
                opaque = True  # a word unknown where flags may stand ($(EXTRA_ARGS)), not an option's value
            if launcher.options_end_at_positional:
                opaque = True  # every option after it is unread
                break
            after_option = False
            index += 1
            continue
        after_option = token.startswith("-") and "=" not in token
        if not token.startswith("-") or token in ("-", "--"):
            if launcher.options_end_at_positional:
                break
            index += 1
            continue
        name, equals, inline = token.partition("=")
        name = _spelling(launcher, name)
        canonical = lookup.get(name)
        if name in switches:
            if canonical is not None:
                values[canonical] = word
            index += 1
            continue
        if equals:
            if canonical is not None:
                offset = len(name) + 1
                values[canonical] = Word(inline, word.at(offset), word.origins[offset:] if word.origins else ())
            index += 1
            continue
        if canonical is not None:
            if index + 1 < len(words):
                values[canonical] = words[index + 1]
            index += 2
        elif launcher.options_end_at_positional:  # an option gpulint does not know: assume it takes a value
            index += 3 if name in launcher.pairs else 2
        else:
            index += 1  # its value, if any, is a positional and is skipped next
    rest = tuple(word.text for word in words[index : index + MAX_REST]) if launcher.options_end_at_positional else ()
    return Launch(launcher, program, values, command.assignments, rest, opaque)


def _unresolved_flag(launcher: Launcher, word: Word) -> str | None:
    """The flag an unresolved ``--flag=$(VALUE)`` word gives (its value unknown), if gpulint reads that flag."""
    name, equals, _ = word.prefix.partition("=")
    if not equals or not name.startswith("-"):
        return None
    return launcher.spelt[0].get(_spelling(launcher, name))
