"""``glovev fit`` on what is not a usable corpus: one line of stderr about the corpus, exit status 2, no model."""

from __future__ import annotations

import gzip
import re

import pytest

import glovev_ext.counting.corpus as corpus_module
from glovev_ext.cli import main

CORPORA = [
    ("one_word_per_line.txt", b"the\n" * 1000,
     r"the corpus holds only 1 distinct word \('the', 1,000 times in 1,000 tokens\): GloVe needs at least two; "
     r"give a larger corpus$"),
    ("one_word_on_a_line.txt", b"the " * 999 + b"the\n",
     r"the corpus holds only 1 distinct word \('the', 1,000 times in 1,000 tokens\)"),
    ("one_frequent_word.txt", b"the " * 1000 + b"a b c\n",
     r"only 1 distinct word occurs min_count=5 times or more \('the', 1,000 times in 1,003 tokens\): GloVe needs at "
     r"least two; give a larger corpus or a lower min_count$"),
    ("ls", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 40,
     r"ls: a program \(an ELF executable\), not text: a corpus is UTF-8 text, one document per line$"),
    ("picture.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(17),
     r"picture\.png: a PNG image, not text: a corpus is UTF-8 text, one document per line$"),
    ("nul.txt", b"some words\x00\x00\x01 and more\n",
     r"nul\.txt: a binary file, not text \(NUL bytes in its first line\): a corpus is UTF-8 text, one document per "
     r"line$"),
    ("corpus.txt", gzip.compress(b"one two three\n" * 100),
     r"corpus\.txt: the file is gzip-compressed: name it corpus\.txt\.gz so it is read decompressed$"),
    ("one_long_line.txt", b"the cat sat on the mat " * 500,
     r"one_long_line\.txt: line 1 is longer than 10,000 characters: a corpus holds one document per line \(a paragraph "
     r"or an article\); split the text into lines$"),
]


@pytest.mark.parametrize("name, content, message", CORPORA, ids=[case[0] for case in CORPORA])
def test_fit_says_what_is_wrong_with_the_corpus_in_one_line(capsys, tmp_path, monkeypatch, name, content, message):
    monkeypatch.setattr(corpus_module, "MAX_LINE_CHARACTERS", 10_000)
    path = tmp_path / name
    path.write_bytes(content)
    status = main(["fit", str(path), "--output", str(tmp_path / "m"), "--n-components", "8", "--epochs", "3",
                   "--quiet", "--n-jobs", "1"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("glovev:")]
    assert status == 2 and len(lines) == 1, err
    assert lines[0].startswith("glovev: error: ") and re.search(message, lines[0]), err
    assert "Traceback" not in err and "array" not in err and not (tmp_path / "m").exists()
