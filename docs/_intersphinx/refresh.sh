#!/usr/bin/env bash
# Extract each bundled inventory from the Debian documentation package it came from (see README.md).
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A inventories=(
    [python3.11-doc]="usr/share/doc/python3.11/html/objects.inv python"
    [python-scipy-doc]="usr/share/doc/python-scipy-doc/html/objects.inv scipy"
    [python-sklearn-doc]="usr/share/doc/python-sklearn-doc/html/objects.inv scikit-learn"
    [python-statsmodels-doc]="usr/share/doc/python-statsmodels-doc/html/objects.inv statsmodels"
    [python-pandas-doc]="usr/share/doc/python-pandas-doc/html/objects.inv pandas"
    [python-dask-doc]="usr/share/doc/python-dask-doc/html/objects.inv dask"
    [python-distributed-doc]="usr/share/doc/python-distributed-doc/html/objects.inv distributed"
)
(cd "$work" && apt-get download "${!inventories[@]}")
for package in "${!inventories[@]}"; do
    read -r path name <<< "${inventories[$package]}"
    deb=$(ls "$work"/"${package}"_*.deb)
    dpkg-deb -x "$deb" "$work/$package"
    # the upstream version: no epoch, no Debian revision, no repacking suffix (+dfsg)
    version=$(dpkg-deb -f "$deb" Version | sed -E 's/^[0-9]+://; s/-[^-]*$//; s/\+.*$//')
    cp "$work/$package/$path" "$name-$version.inv"
    echo "$name-$version.inv from $(basename "$deb")"
done
