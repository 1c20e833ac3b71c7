"""Tutorial 8: genres of the Brown corpus in one basis -- how words differ between them, with error bars.
======================================================================================================

GloVe is fitted once on the whole corpus; then each genre's co-occurrence rows are fitted given
the pooled context vectors (``glovev_ext.fit_subcorpora``), so a word's vector in the press and
its vector in fiction are points of the same space, with GloVe-V covariances (the genres share no
text, only the pooled fit's prior, whose shared part of the errors the change test and
``compare_models`` take out). No alignment (Procrustes) is needed, and every comparison gets a
standard error:

- self-similarity cos(w in press, w in fiction) with its interval (noise alone keeps it below 1, and
  near 1 the interval does not hold its coverage: docs/method.md 7.3, and the result says so);
- a Wald test that the word's vector is the same in both genres (Holm-corrected over the words): the
  calibrated test of change;
- the same statistic in three genres, compared with ``compare_models`` (equality and pairwise);
- a word's nearest neighbours in each genre, with their intervals.

Corpus: ../shared/data/brown (1.16M tokens; genres from brown_docs_meta.tsv: press = news,
editorial, reviews; fiction = fiction, mystery, science_fiction, adventure, romance, humor;
learned = learned, government), D = 30, 25 epochs (a smaller D than tutorial 1 because each genre
has about 300k tokens). Without it: two halves of the embedded corpus.
Run: python tutorials/08_subcorpora_change.py  (about a minute).
Figure: figures/subcorpora_self_similarity.png.
"""

import csv
import time

from _common import QUICK, fit_objects, save_figure, shared_path

import glovev_ext
from glovev_ext import compare_models, fit_subcorpora, self_similarity, vector_change_test
from glovev_ext.plots import plot_results
from statsmodels.stats.multitest import multipletests

GENRES = {"press": ("news", "editorial", "reviews"),
          "fiction": ("fiction", "mystery", "science_fiction", "adventure", "romance", "humor"),
          "learned": ("learned", "government")}
WORDS = ["man", "time", "state", "party", "power", "church", "home", "love", "money", "war", "world", "school",
         "water", "mind", "cell", "case"]

start = time.perf_counter()
brown = shared_path("brown")
if brown is None or QUICK:
    if not QUICK:
        print("../shared/data/brown not found: two halves of the embedded corpus stand in for genres")
    documents = list(glovev_ext.load_default_corpus(max_documents=4000 if QUICK else None))
    half = len(documents) // 2
    genres = {"press": documents[:half], "fiction": documents[half:]}
else:
    sentences = (brown / "brown_sents.txt").read_text(encoding="utf-8").splitlines()
    genres = {name: [] for name in GENRES}
    documents = []
    with open(brown / "brown_docs_meta.tsv", encoding="utf-8") as stream:
        for row in csv.DictReader(stream, delimiter="\t"):
            first, count = int(row["first_line"]) - 1, int(row["n_sentences"])
            text = " ".join(sentences[first:first + count])
            documents.append(text)
            for name, categories in GENRES.items():
                if row["category"] in categories:
                    genres[name].append(text)
vectorizer, estimator = fit_objects()
if not QUICK:
    estimator.set_params(n_components=30)
print(f"pooled fit of {len(documents)} documents with {vectorizer} and {estimator}; genres: "
      + ", ".join(f"{name} ({len(texts)} documents)" for name, texts in genres.items()))
pooled = glovev_ext.fit_corpus(documents, vectorizer, estimator, progress=False)
by_genre = fit_subcorpora(pooled, genres)
for name, kv in by_genre.items():
    print(f"   {name}: {len(kv):,} of {len(pooled.keyed_vectors):,} words fitted from the genre alone")

first, second = "press", "fiction"
similar = self_similarity(by_genre[first], by_genre[second], WORDS, labels=(first, second), missing="drop",
                          random_state=0)
print()
print(similar.summary())
change = vector_change_test(by_genre[first], by_genre[second], WORDS, labels=(first, second), missing="drop")
change["P adj. (holm)"] = multipletests(change["P>chi2"], method="holm")[1]
print()
print(f"Is the word's vector the same in {first} and {second}? (Wald test of w_{first} = w_{second}, "
      f"{pooled.keyed_vectors.vector_size} dimensions)")
print(change.sort_values("chi2", ascending=False).round(4).to_string())

intervals = [similar[k] for k in range(len(similar))]
save_figure(plot_results(intervals, labels=[name.split("(")[1].split(" [")[0] for name in similar.names],
                         xlabel=f"cosine of a word's vector in {first} with its vector in {second}",
                         title="Self-similarity across genres, 95 % intervals"), "subcorpora_self_similarity.png")

pair = ("man", "woman")
usable = {name: kv for name, kv in by_genre.items() if all(kv.unusable_reason(w) is None for w in pair)}
if len(usable) >= 2:
    comparison = compare_models({name: kv.similarity_test(*pair, method="delta") for name, kv in usable.items()})
    print()
    print(comparison.summary())
    pairwise = comparison.pairwise("holm")  # under one prior: on atanh, against the equality test's null draws
    print(pairwise.name)
    print(pairwise.summary_frame().round(4).to_string())

word = "party" if all(by_genre[g].unusable_reason("party") is None for g in (first, second)) else WORDS[0]
for name in (first, second):
    neighbours = by_genre[name].nearest_neighbors_test(word, topn=5, n_draws=500, random_state=0, missing="drop")
    low_high = neighbours.similarities.conf_int().to_numpy()
    print(f"{word!r} in {name}: " + ", ".join(
        f"{w} {c:.2f} [{lo:.2f}, {hi:.2f}]" for w, c, (lo, hi) in
        zip(neighbours.neighbors, neighbours.similarities.estimates, low_high)))
print(f"done in {time.perf_counter() - start:.0f} s")
