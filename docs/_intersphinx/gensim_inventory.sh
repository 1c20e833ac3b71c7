#!/usr/bin/env bash
# Build gensim's inventory from gensim's own documentation sources (see README.md).
#
# gensim publishes its site (https://radimrehurek.com/gensim/) but no package carries its
# objects.inv. Its API pages are the reStructuredText files of docs/src that hold an
# ``automodule`` directive; Sphinx's autodoc run on exactly those files, at the release installed
# here, writes the inventory of those pages under the same page names as gensim's site.
#
# Usage: gensim_inventory.sh GENSIM_GIT_CLONE [TAG]   (TAG defaults to the installed version)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
clone=$1
tag=${2:-$(python -c 'import gensim; print(gensim.__version__)')}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src"
git -C "$clone" grep -l '^\.\. automodule::' "$tag" -- 'docs/src/*.rst' | sed "s|^$tag:docs/src/||" > "$work/pages"
while read -r page; do
    mkdir -p "$work/src/$(dirname "$page")"
    git -C "$clone" show "$tag:docs/src/$page" > "$work/src/$page"
done < "$work/pages"
{
    echo "project = 'gensim'"
    echo "release = version = '$tag'"
    echo "extensions = ['sphinx.ext.autodoc', 'sphinx.ext.napoleon']"
    echo "autoclass_content = 'both'"  # as gensim's conf.py
    echo "napoleon_google_docstring = False"
    echo "suppress_warnings = ['toc.not_included', 'autodoc', 'docutils', 'ref']"
    echo "exclude_patterns = ['_build']"
    echo "root_doc = 'index'"
} > "$work/src/conf.py"
{ echo "API"; echo "==="; echo; echo ".. toctree::"; echo; sed 's/\.rst$//; s/^/   /' "$work/pages"; } > "$work/src/index.rst"
python -m sphinx -q -b html "$work/src" "$work/html" 2> "$work/log" || { cat "$work/log"; exit 1; }
cp "$work/html/objects.inv" "$here/gensim-$tag.inv"
echo "gensim-$tag.inv from $(wc -l < "$work/pages") API pages of gensim $tag"
