"""Overlay inputs a build step writes before kustomize runs, so that no checkout holds them.

An overlay may name a file (`deployment.env` for a configMapGenerator, `manifests.yaml` a release's
download) that a script, a Makefile or Terraform writes first. Its absence is no broken overlay: the
overlay was not checked. The evidence, read and never run:

- git leaves the file out of its work tree (.gitignore);
- a template of it stands beside it or in a ``templates`` folder there (``templates/deployment.tpl.env``
  for ``deployment.env``, as ``envsubst`` fills it in);
- a shell script, Makefile or Terraform file in its folder or a folder above it, up to the repository's
  root, writes a path ending in its name (``| sponge "$DIR/deployment.env"``, ``> vllm.env``,
  ``wget ... -O $DIR/manifests.yaml``, ``tee``, ``--output``, a Terraform ``local_file``'s ``filename``),
  or a Go file there writes it by name (``os.WriteFile(path.Join(dir, "source.yaml"), ...)``, a test helper
  that fills an overlay in before it builds it);
- such a file runs a known generator whose output it is (_GENERATORS: operator-sdk's CSV base);
- its own name says it is generated output (``generated-manifest.yaml``, ``generated.yaml``,
  ``manifests.generated.yaml``): a name nobody types for a file they write by hand, nor by mistake.

Bounded: at most MAX_WRITERS files of at most MAX_WRITER_BYTES are read per folder.
"""

from __future__ import annotations

import os
import re

from gpulint.lint.inputs.folder_scripts import script_texts
from gpulint.lint.paths import is_within

TEMPLATE_FOLDERS = ("", "templates")
MAX_WRITERS = 64
MAX_WRITER_BYTES = 1024 * 1024
_WRITER_SUFFIXES = (".sh", ".bash", ".tf", ".mk")
_WRITER_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})


def written_by_build_step(path: str, repository: str) -> str:
    """How the absent file at ``path`` (a real path inside ``repository``) is shown to be one a build step
    writes ("its template templates/deployment.tpl.env is", "configure.sh writes it"); "" when nothing shows
    it (git-ignored files are the caller's other evidence)."""
    template = _template(path)
    if template:
        return f"its template {template} is in the repository"
    writer = _writer(path, repository)
    if writer:
        return f"{os.path.relpath(writer, repository)} writes it"
    generator = _generator(path, repository)
    if generator:
        return f"{os.path.relpath(generator, repository)} generates it"
    return "its name says it is generated output" if _GENERATED_NAME.search(os.path.basename(path)) else ""


# The word "generated" in a file's name, between separators (kserve/kserve's test/overlays/istio lists
# generated-manifest.yaml, istio's manifest, which nothing in the checkout writes and its validate-manifests workflow
# skips; tools that write a kustomization beside their output name it generated.yaml). Not "generator.yaml",
# "generate.yaml" or "regenerated.yaml": their names say no such thing.
_GENERATED_NAME = re.compile(r"(?:^|[-_.])generated(?:[-_.]|$)", re.IGNORECASE)


# Generators whose output an overlay names, by the command a Makefile or script runs and the path it writes:
# operator-sdk's `generate kustomize manifests` writes config/manifests/bases/<project>.clusterserviceversion.yaml,
# which the kustomization it scaffolds beside it lists (operator-sdk v1.x, internal/cmd/operator-sdk/generate/
# kustomize/manifests.go; bentoml/yatai-deployment's Makefile runs it in `bundle` before `kustomize build`).
_GENERATORS = (
    (
        re.compile(
            r"(?:\boperator-sdk|\$\(OPERATOR_SDK\)|\$\{OPERATOR_SDK\}|\$OPERATOR_SDK\b)\s+generate\s+kustomize\s+manifests\b"
        ),
        re.compile(r"(?:^|/)bases/[^/]+\.clusterserviceversion\.yaml$"),
    ),
)


def _generator(path: str, repository: str) -> str:
    """The Makefile or script, from the file's folder up to the repository's root, that runs a generator of
    _GENERATORS whose output ``path`` is; "" when none does."""
    commands = [command for command, output in _GENERATORS if output.search(path.replace(os.sep, "/"))]
    if not commands:
        return ""
    directory = os.path.dirname(path)
    top = os.path.realpath(repository)
    while is_within(directory, top):
        for writer, text in _writer_texts(directory):
            if any(command.search(text) for command in commands):
                return writer
        if os.path.realpath(directory) == top:
            break
        directory = os.path.dirname(directory)
    return ""


def _template_names(name: str) -> tuple[str, ...]:
    """The names a template of ``name`` goes by: deployment.tpl.env, deployment.env.tpl, .tmpl, .template,
    .in, .example and .sample (a file to copy and fill in)."""
    stem, suffix = os.path.splitext(name)
    infixed = tuple(f"{stem}.{word}{suffix}" for word in ("tpl", "tmpl", "template")) if suffix else ()
    return (*infixed, *(f"{name}.{word}" for word in ("tpl", "tmpl", "template", "in", "example", "sample")))


def _template(path: str) -> str:
    """The template's path relative to the file's folder, or ""."""
    directory, name = os.path.split(path)
    for folder in TEMPLATE_FOLDERS:
        for candidate in _template_names(name):
            if os.path.isfile(os.path.join(directory, folder, candidate)):
                return os.path.join(folder, candidate)
    return ""


def _write_pattern(name: str) -> re.Pattern[str]:
    """A redirection, sponge, tee, -O/-o, --output or a Terraform local_file's filename whose target path
    ends in ``name``."""
    return re.compile(
        r"(?:>>?|\bsponge|\btee(?:\s+-a)?|\s-[Oo]|--output[= ]|\bfilename\s*=)\s*[\"']?[^\s\"'<>|;&]*?"
        rf"(?<![\w.-]){re.escape(name)}(?![\w.-])"
    )


def _go_write_pattern(name: str) -> re.Pattern[str]:
    """A Go program's write of a file whose name is the string literal ``name``, alone or at the end of a path,
    in the call's first argument: ``os.WriteFile(path.Join(overlayDir, "ci-artifacts-source-template.yaml"), ...)``
    (cluster-api-provider-aws's test/helpers/kubernetesversions/template.go writes its overlay's resource, then
    builds it), ``ioutil.WriteFile``, ``os.Create``, ``os.OpenFile``."""
    return re.compile(
        r"\b(?:os|ioutil)\.(?:WriteFile|Create|OpenFile)\([^;\n]*?\"(?:[^\"\n]*/)?" + re.escape(name) + '"'
    )


def _writer(path: str, repository: str) -> str:
    """The script, Makefile, Terraform or Go file that writes ``path``, from its folder up to the repository's
    root; "" when none does."""
    directory, name = os.path.split(path)
    pattern, go_pattern = _write_pattern(name), _go_write_pattern(name)
    top = os.path.realpath(repository)
    while is_within(directory, top):
        for writer, text in _writer_texts(directory):
            if pattern.search(text):
                return writer
        for writer, text in script_texts(directory, (".go",), (), MAX_WRITERS, MAX_WRITER_BYTES):
            if go_pattern.search(text):
                return writer
        if os.path.realpath(directory) == top:
            break
        directory = os.path.dirname(directory)
    return ""


def _writer_texts(directory: str) -> list[tuple[str, str]]:
    return script_texts(directory, _WRITER_SUFFIXES, _WRITER_NAMES, MAX_WRITERS, MAX_WRITER_BYTES)


# kustomize's load restrictor turned off on the command line: `kustomize build --load-restrictor=LoadRestrictionsNone`
_UNRESTRICTED = re.compile(r"--load[-_]restrictor[= ]\s*[\"']?LoadRestrictionsNone")


def built_unrestricted(overlay: str, repository: str) -> str:
    """The script or Makefile that builds the overlay with kustomize's load restrictor off, "" when none does. Read in
    the overlay's folder, the folders above it up to the repository's root and the root's ``hack``/``scripts``. It
    names the flag and the overlay: by its path from the file's own folder (flyteorg/flyte's devbox Makefile:
    ``$(KUSTOMIZE) build --enable-helm --load-restrictor=LoadRestrictionsNone kustomize/complete``), or by a path
    through variables (kubernetes-sigs/cluster-api-provider-azure's hack/gen-flavors.sh loops ``${KUSTOMIZE} build
    --load-restrictor LoadRestrictionsNone "${flavors_dir}${name}"`` over ``flavors_dir="${REPO_ROOT}/templates/
    flavors/"``; its Makefile builds ``$(AZURE_TEMPLATES)/v1beta1/cluster-template-aks``)."""
    overlay = os.path.realpath(overlay)
    top = os.path.realpath(repository)
    if not is_within(overlay, top) or overlay == top:
        return ""
    from_top = "/" + os.path.relpath(overlay, top).replace(os.sep, "/")
    for directory in [*_folders_up(overlay, top), *(os.path.join(top, name) for name in _STEP_FOLDERS)]:
        named = _naming(os.path.relpath(overlay, directory))
        for writer, text in _writer_texts(directory):
            builds = _unrestricted_builds(text)
            if not (builds or _UNRESTRICTED.search(text)):
                continue
            if named.search(text) or _built_through_variables(text, builds, from_top):
                return writer
            if _built_after_cd(text, builds, overlay, (top, directory)):
                return writer
    return ""


def _naming(relative: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w./-])(?:\./)?{re.escape(relative)}/?(?![\w./-])")


# A variable whose value turns the restrictor off, written out or read from kustomize itself (kserve/modelmesh-serving's
# scripts/install.sh: `kustomize_load_restrictor_arg=$( kustomize build --help | grep -o -E "\-\-load.restrictor[^,]+"
# | sed ... '(.*none)' ...)`, the flag in the spelling the installed kustomize takes)
_RESTRICTOR_VALUE = re.compile(r"load.restrictor.*none", re.IGNORECASE)


def _unrestricted_builds(text: str) -> list[str]:
    """The ``build`` lines that turn kustomize's load restrictor off: by the flag, or by a variable the file assigns
    a value that names the flag and ``none``."""
    off = {found.group(1) for found in _ASSIGNMENT.finditer(text) if _RESTRICTOR_VALUE.search(found.group(2))}
    uses = re.compile(r"\$[{(]?(?:" + "|".join(map(re.escape, sorted(off))) + r")\b") if off else None
    return [
        line
        for line in text.replace("\\\n", " ").splitlines()
        if "build" in line and (_UNRESTRICTED.search(line) or (uses is not None and uses.search(line)))
    ]


# `cd config`, `pushd deploy/overlays`: a literal folder a script moves to before it builds
_CD = re.compile(r"^[ \t]*(?:cd|pushd)[ \t]+[\"']?(\w[\w./-]*)[\"']?[ \t]*(?:[;&|#]|$)", re.MULTILINE)


def _built_after_cd(text: str, builds: list[str], overlay: str, bases: tuple[str, str]) -> bool:
    """A restrictor-off build line that names the overlay by its path from a folder the file ``cd``s to, that folder
    taken from the repository's root (where such scripts are run) or from the file's own folder."""
    top = bases[0]
    for target in _CD.findall(text):
        for base in bases:
            folder = os.path.normpath(os.path.join(base, target))
            if folder == overlay or not is_within(overlay, folder) or not is_within(folder, top):
                continue
            named = _naming(os.path.relpath(overlay, folder))
            if any(named.search(line) for line in builds):
                return True
    return False


def _folders_up(overlay: str, top: str) -> list[str]:
    folders: list[str] = []
    directory = os.path.dirname(overlay)
    while is_within(directory, top) and directory not in folders:
        folders.append(directory)
        directory = os.path.dirname(directory)
    return folders


# A shell or make variable: ${name}, $(NAME), $name, or a script's argument: $1, ${2}, $@, $*
_VARIABLE = re.compile(r"\$\{[^}\n]*\}|\$\([^)\n]*\)|\$[A-Za-z_]\w*|\$[0-9@*]")
# Where a pipeline's command ends: `|`, `||`, `&&`, `;`
_PIPE = re.compile(r"\s(?:\|\|?|&&|;)\s")
# xargs' replacement string (`xargs -I {}`, `-i`/`--replace` for `{}`) and find's `-exec ... {}`: each input's text
_XARGS = re.compile(r"\bxargs\b.*?\s(?:-I\s*[\"']?([^\s\"']+)|-i\b|--replace\b)")
# An assignment in a script or Makefile: `flavors_dir="${REPO_ROOT}/templates/flavors/"`, `DIR := $(ROOT)/data`
_ASSIGNMENT = re.compile(
    r"^[ \t]*(?:export[ \t]+|local[ \t]+|readonly[ \t]+)?([A-Za-z_]\w*)[ \t]*[:?+]?=[ \t]*(\S.*?)[ \t]*$", re.M
)
_COMMAND = re.compile(r"\$\([a-z][\w-]*\s|`")
_NAME_OF = re.compile(r"^\$[{(]?([A-Za-z_]\w*)[})]?$")
MAX_EXPANSIONS = 8


def _built_through_variables(text: str, builds: list[str], from_top: str) -> bool:
    """A ``kustomize build`` with the restrictor off whose path, its variables expanded where the file assigns them
    (up to MAX_EXPANSIONS deep) and any other variable read as any text, ends in the overlay's path from the
    repository's root. The path must keep a folder's name of its own: a bare ``"$dir"`` names no overlay."""
    assigned: dict[str, str] = {}
    for found in _ASSIGNMENT.finditer(text):
        value = found.group(2).strip("\"'")
        if not _COMMAND.search(value):  # `$(dirname ...)`, `$(shell ...)`: its output is not read, any text
            assigned.setdefault(found.group(1), value)
    for line in builds:
        parts = [part for part in _PIPE.split(line) if "build" in part]  # `docker build ... && kustomize build ...`
        command = next((part for part in parts if _UNRESTRICTED.search(part)), parts[0] if parts else line)
        for word in command.split():
            if word.startswith((">", "|", "&")):  # what follows writes the output: no overlay of the build
                break
            word = _inputs_named(command, word.strip("\"';"))
            if "$" not in word or word.startswith("-"):
                continue
            path = _expanded(word, assigned)
            literal = _VARIABLE.sub("", path)
            if not re.search(r"[A-Za-z0-9]", literal.replace("/", "")):
                continue
            pattern = "".join(
                ".*" if _VARIABLE.fullmatch(part) else re.escape(part)
                for part in re.split(f"({_VARIABLE.pattern})", path)
            )
            if re.fullmatch(rf"(?:.*/)?{pattern.removeprefix('./')}/?", from_top):
                return True
    return False


def _inputs_named(command: str, word: str) -> str:
    """The word with xargs' replacement string or find's ``{}`` written as a variable: any text, since each input
    line takes its place (cluster-api-provider-aws's hack/gen-test-flavors.sh: ``xargs -t -I {} ${kustomize} build
    --load-restrictor LoadRestrictionsNone --reorder none ${src_dir}{}``)."""
    found = _XARGS.search(command)
    replaced = (found.group(1) or "{}") if found else ("{}" if "-exec" in command else "")
    return word.replace(replaced, "${_}") if replaced else word


def _expanded(word: str, assigned: dict[str, str]) -> str:
    for _ in range(MAX_EXPANSIONS):

        def value(found: re.Match[str]) -> str:
            name = _NAME_OF.match(found.group(0))
            return assigned.get(name.group(1), found.group(0)) if name else found.group(0)

        expanded = _VARIABLE.sub(value, word)
        if expanded == word:
            break
        word = expanded
    return word


# A build step that adds to or removes from kustomizations before it builds: `kustomize edit add resource
# ../certmanager`, written with the binary's variable as Makefiles and scripts do (`$(KUSTOMIZE) edit`,
# `${KUSTOMIZE} edit`, `$KUSTOMIZE edit`). Not `edit set` (kubebuilder's `edit set image controller=${IMG}` in every
# operator's Makefile): a value it sets does not make an overlay build that failed.
_EDITS = re.compile(r"(?:\bkustomize|\$\(KUSTOMIZE\)|\$\{KUSTOMIZE\}|\$KUSTOMIZE\b)\s+edit\s+(?:add|remove)\b")
# Folders at the repository's root where projects keep such steps (kubebuilder's `hack/`, `scripts/`), read beside the
# overlay's own folder and the folders above it.
_STEP_FOLDERS = ("hack", "scripts", "script")


def built_after_edit(overlay: str, repository: str) -> str:
    """The script or Makefile that runs ``kustomize edit`` and builds the overlay, named by its path from the
    repository's root (kubernetes-sigs/lws's hack/e2e-test.sh: ``$KUSTOMIZE edit add resource "../certmanager"`` in
    config/default, then ``$KUSTOMIZE build $CWD/test/e2e/config/certmanager``): the overlay as written is not what
    is built. Read in the overlay's folder, the folders above it and the root's ``hack``/``scripts``; "" when none."""
    overlay = os.path.realpath(overlay)
    top = os.path.realpath(repository)
    if not is_within(overlay, top) or overlay == top:
        return ""
    named = re.compile(rf"(?<![\w.-]){re.escape(os.path.relpath(overlay, top))}/?(?![\w.-])")
    folders: list[str] = []
    directory = os.path.dirname(overlay)
    while is_within(directory, top) and directory not in folders:
        folders.append(directory)
        directory = os.path.dirname(directory)
    folders += [os.path.join(top, name) for name in _STEP_FOLDERS]
    for folder in folders:
        for writer, text in _writer_texts(folder):
            if _EDITS.search(text) and named.search(text):
                return writer
    return ""
