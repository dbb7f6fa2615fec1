"""Words a script beside a manifest replaces with ``sed`` before it applies the manifest, read and never run.

A folder of one-off manifests often keeps the script that fills them in beside them: toboshii/home-ops'
``hack/wipe-rook.sh`` runs ``cat wipe-rook.yaml | sed -e "s/HOSTNAME/$i/g" | kubectl apply -f -`` once per node,
over a Pod named ``disk-wipe-HOSTNAME``. The upper-case word in the name is a fill-in, not a name written wrongly:
the API server never sees it. The words are those of ``s/WORD/`` (any delimiter) in a ``sed`` command of a shell
script or Makefile in the manifest's own folder; they apply to that folder's manifests, the convention of the folder.

Bounded: at most MAX_SCRIPTS files of at most MAX_BYTES each are read, and only for a file whose name holds an
upper-case word (the loader asks only then). A run reads each folder once: the collection makes one FolderScripts
and hands it to the loader through its sources, its parses (parsed_once) and the repository index.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from gpulint.lint.inputs.folder_scripts import script_texts

MAX_SCRIPTS = 32
MAX_BYTES = 256 * 1024
_SCRIPTS = (".sh", ".bash", ".mk")
_SCRIPT_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})
# `sed -e "s/HOSTNAME/$i/g"`, `sed 's|NODE_NAME|node1|'`, `sed -i "s#REGION#${REGION}#g"`: the upper-case word it replaces
_SED = re.compile(r"\bsed\b[^\n|;]*?\bs([/|#,:@])([A-Z][A-Z0-9_]{2,})\1")


@dataclass
class FolderScripts:
    """The words the scripts of each folder replace with ``sed``, each folder read on its first ask. A script the
    collection's walk would leave out (``exclude``, .gitignore, .git/info/exclude) fills in no word: it is not in
    every checkout, or the user said it is not theirs."""

    exclude: tuple[str, ...] = ()
    by_folder: dict[str, frozenset[str]] = field(default_factory=dict)

    def words(self, manifest: str) -> frozenset[str]:
        """The upper-case words a ``sed`` of a script in ``manifest``'s folder replaces (empty when none, or
        when ``manifest`` is no file: a document read from a string or a rendered output)."""
        if not os.path.isfile(manifest):
            return frozenset()
        directory = os.path.dirname(os.path.abspath(manifest))
        words = self.by_folder.get(directory)
        if words is None:
            # the folder as the walk names it, so that `exclude` matches the same path
            words = self.by_folder[directory] = _sed_words(os.path.dirname(manifest) or os.curdir, self.exclude)
        return words


def _sed_words(directory: str, exclude: tuple[str, ...]) -> frozenset[str]:
    scripts = script_texts(directory, _SCRIPTS, _SCRIPT_NAMES, MAX_SCRIPTS, MAX_BYTES, exclude)
    return frozenset(found.group(2) for _path, text in scripts for found in _SED.finditer(text))
