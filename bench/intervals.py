"""Intervals on the main job's default fit: do they stay in range, and does the delta method agree with Monte Carlo?

Usage: python bench/intervals.py [--pairs 300] [--mc-draws 8000]

Fits what ``glovev fit`` fits by default (the embedded corpus, D = 50, 25 epochs, random_state 0),
and the same parameters with the paper's conditioning. Then, for the default recipe (exact
inverse, ``method="auto"``, t, bounded scale) and the paper's (pseudo-inverse, delta method,
normal, linear scale):

- cosines of random pairs of words with covariances: intervals leaving [-1, 1];
- the Caliskan WEATs (../shared/data/weat; skipped when absent): effect-size intervals leaving
  [-2, 2];
- of the default results that report the delta method, the largest gap between their standard
  error and Monte Carlo's with ``--mc-draws`` draws (goal: within 5 %).
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from _data import SHARED_DATA

import glovev_ext

PAPER = {"method": "delta", "use_t": False, "scale": "linear"}


def caliskan_tests() -> list[tuple[str, list[list[str]]]]:
    path = SHARED_DATA / "weat" / "weat_caliskan2017.json"
    if not path.exists():
        return []
    tests = json.loads(path.read_text())["tests"]
    # the main job's model is lowercased
    return [(t["id"], [[w.lower() for w in t[role]["words_used"]] for role in ("X", "Y", "A", "B")]) for t in tests]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--mc-draws", type=int, default=8000)
    args = parser.parse_args()
    fitted = glovev_ext.fit_corpus(glovev_ext.load_default_corpus(),
                                   estimator=glovev_ext.GloVeVEstimator(random_state=0, point_estimate="trained"),
                                   progress=False)
    kv, model = fitted.keyed_vectors, fitted.estimator
    parameters = (model.embedding_, model.context_embedding_, model.bias_, model.context_bias_)
    paper_model = glovev_ext.GloVeVEstimator(model.n_components, pretrained=parameters, conditioning="paper",
                                             point_estimate="trained",
                                             progress=False).fit(fitted.cooccurrence)
    paper_kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(paper_model)
    print(f"D={kv.vector_size}: {int(model.covariance_defined_.sum()):,} of {len(kv):,} words with a covariance "
          f"(exact); the paper's rule puts {int(paper_model.pseudo_inverse_.sum()):,} on the pseudo-inverse")
    usable = [w for w in kv.index_to_key if kv.has_covariance(w)]
    pairs = np.random.default_rng(0).choice(len(usable), size=(args.pairs, 2))
    report_pairs(kv, paper_kv, [(usable[a], usable[b]) for a, b in pairs if a != b], "random pairs", args.mc_draws)
    frequent = [w for w in usable if w.isalpha()][:40]
    report_pairs(kv, paper_kv, list(zip(frequent[::2], frequent[1::2])), "pairs of the 40 most frequent words",
                 args.mc_draws)
    for name, lists in caliskan_tests():
        try:
            default = kv.weat_test(*lists, missing="drop", random_state=0)
            paper = paper_kv.weat_test(*lists, missing="drop", **PAPER)
        except (ValueError, KeyError) as error:
            print(f"{name}: not computable ({str(error)[:80]} ...)")
            continue
        line = (f"{name}: d = {default.estimates[0]:.2f}; default [{default.conf_int().iloc[0, 0]:.2f}, "
                f"{default.conf_int().iloc[0, 1]:.2f}] ({default.method}); paper [{paper.conf_int().iloc[0, 0]:.2f}, "
                f"{paper.conf_int().iloc[0, 1]:.2f}]; dropped {len(default.dropped)}")
        if default.method == "delta method":
            drawn = kv.weat_test(*lists, missing="drop", method="monte carlo", n_draws=args.mc_draws, random_state=0)
            line += f"; delta vs Monte Carlo gap {abs(default.std_errors[0] / drawn.draws_std_errors[0] - 1):.1%}"
        print(line, flush=True)


def report_pairs(kv, paper_kv, pairs, label: str, mc_draws: int) -> None:
    gaps, widths, methods, outside = [], [], {}, {"default": 0, "paper": 0}
    for k, (a, b) in enumerate(pairs):
        result = kv.similarity_test(a, b, random_state=k)
        low, high = result.conf_int()
        outside["default"] += not -1 <= low <= high <= 1
        widths.append(high - low)
        methods[result.method] = methods.get(result.method, 0) + 1
        if result.method == "delta method":
            drawn = kv.similarity_test(a, b, method="monte carlo", n_draws=mc_draws, random_state=k)
            gaps.append(abs(result.std_error / drawn.draws_std_error - 1))
        low, high = paper_kv.similarity_test(a, b, **PAPER).conf_int()
        outside["paper"] += not -1 <= low <= high <= 1
    print(f"{len(pairs)} {label}: median width {np.median(widths):.2f}; intervals outside [-1, 1]: default "
          f"{outside['default']}, paper "
          f"{outside['paper']}; methods {methods}; delta vs {mc_draws} Monte Carlo draws: largest gap "
          f"{max(gaps, default=float('nan')):.1%}, median {np.median(gaps) if gaps else float('nan'):.1%}",
          flush=True)


if __name__ == "__main__":
    main()
