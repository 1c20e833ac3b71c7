"""The built documentation site, opened in headless Chromium as a reader would open it.

Needs the site built (CONTRIBUTING.md: ``sphinx-build ... docs docs/_build/html``), Debian's
``chromium`` and Playwright (the ``docs`` extra). Without them the tests are skipped, unless
``GLOVEV_DOCS_SITE_REQUIRED=1`` (CI sets it) makes that a failure. The site is served from
127.0.0.1 by a server this test starts; the browser reaches nothing else.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

SITE = Path(__file__).resolve().parents[1] / "docs" / "_build" / "html"
CHROMIUM = os.environ.get("GLOVEV_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
# Per gallery page: the figures of a full run (checked in, shown after the introduction) and those the
# tutorial draws in the quick mode the site is built in (04's surname lists are not in the quick
# corpus; 09 plans a study without a figure).
GALLERY_FIGURES = {"01_fit_and_variance": (2, 2), "02_doctor_neighbours": (1, 1), "03_weat_gender": (1, 1),
                   "04_surname_bias": (1, 0), "05_evaluation": (1, 1), "06_bootstrap_vs_glovev": (1, 1),
                   "07_semeval_relations": (1, 1), "08_subcorpora_change": (1, 1), "09_study_planning": (0, 0)}
GENSIM_METHODS = ["most_similar", "similarity", "doesnt_match", "n_similarity", "rank", "most_similar_cosmul", "save"]


def _missing() -> str | None:
    if not (SITE / "index.html").exists():
        return f"the site is not built ({SITE})"
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if shutil.which("chromium") is None and not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} is not executable"
    if importlib.util.find_spec("playwright") is None:
        return "Playwright is not installed (pip install '.[docs]')"
    return None


@pytest.fixture(scope="module")
def site_url():
    reason = _missing()
    if reason:
        if os.environ.get("GLOVEV_DOCS_SITE_REQUIRED") == "1":
            pytest.fail(reason)
        pytest.skip(reason)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(SITE)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()
    server.server_close()


@pytest.fixture(scope="module")
def browser(site_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class Page:
    """A browser page that records console errors, uncaught exceptions and failed requests."""

    def __init__(self, browser, site_url: str):
        self.site_url = site_url
        self.page = browser.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(
            f"console: {message.text}"))
        self.page.on("pageerror", lambda error: self.errors.append(f"exception: {error}"))
        self.page.on("requestfailed", lambda request: self.errors.append(f"failed: {request.url}"))
        self.page.on("response", lambda response: response.status >= 400 and self.errors.append(
            f"HTTP {response.status}: {response.url}"))

    def open(self, path: str):
        self.page.goto(f"{self.site_url}/{path}", wait_until="load")
        return self.page


@pytest.fixture
def page(browser, site_url):
    opened = Page(browser, site_url)
    yield opened
    opened.page.close()
    assert opened.errors == [], "\n".join(opened.errors)


def test_the_front_page_renders(page):
    front = page.open("index.html")
    assert "glovev-ext" in front.title()
    assert front.locator("h1").first.inner_text().startswith("glovev-ext")
    for link in ("Getting started", "User guide", "API reference", "Command-line reference"):
        assert front.get_by_role("link", name=link).first.is_visible(), link


@pytest.mark.parametrize("query, target", [
    ("similarity_test", "api/generated/glovev_ext.KeyedVectorsWithVariance.html#glovev_ext.KeyedVectorsWithVariance.similarity_test"),
    ("GloVeVEstimator", "api/generated/glovev_ext.GloVeVEstimator.html"),
])
def test_the_search_box_finds(page, query, target):
    search = page.open("index.html")
    search.get_by_role("button", name="Search").first.click()  # the navbar's search button opens the box
    box = search.locator("input[name=q]:visible").first
    box.fill(query)
    box.press("Enter")
    search.wait_for_url("**/search.html?q=*")
    results = search.locator("#search-results ul.search li a")
    results.first.wait_for(timeout=30_000)
    hrefs = [link.get_attribute("href") or "" for link in results.all()]
    path, _, fragment = target.partition("#")
    assert any(href.partition("#")[0].partition("?")[0].endswith(path) and href.partition("#")[2] == fragment
               for href in hrefs), hrefs


@pytest.mark.parametrize("tutorial", sorted(GALLERY_FIGURES))
def test_each_gallery_page_shows_its_figures(page, tutorial):
    gallery_page = page.open(f"tutorials/{tutorial}.html")
    assert gallery_page.locator("h1").first.inner_text().startswith("Tutorial")
    full_run = gallery_page.locator("img.glovev-full-run")
    quick_run = gallery_page.locator("img.sphx-glr-single-img, img.sphx-glr-multi-img")
    assert (full_run.count(), quick_run.count()) == GALLERY_FIGURES[tutorial]
    for image in full_run.all() + quick_run.all():
        image.scroll_into_view_if_needed()
        image.evaluate("img => img.complete || new Promise(resolve => img.addEventListener('load', resolve))")
        assert image.evaluate("img => img.complete && img.naturalWidth > 0"), image.get_attribute("src")
    for download in ("Download Jupyter notebook", "Download Python source code"):
        assert gallery_page.get_by_text(download).first.is_visible(), download


def test_the_container_page_lists_gensims_methods_with_links(page):
    container = page.open("api/generated/glovev_ext.KeyedVectorsWithVariance.html")
    inherited = container.locator("p.rubric", has_text="Inherited methods")
    assert inherited.count() == 1
    table = inherited.locator("xpath=following::table[1]")
    for method in GENSIM_METHODS:
        anchor = f"glovev_ext.KeyedVectorsWithVariance.{method}"
        link = table.locator(f"a[href='#{anchor}']")
        assert link.count() == 1, method
        assert container.locator(f"[id='{anchor}']").count() == 1, method
    entry = container.locator("[id='glovev_ext.KeyedVectorsWithVariance.most_similar']").locator("xpath=..")
    assert "gensim.models.keyedvectors.KeyedVectors.most_similar" in entry.inner_text()
    # the base class links to gensim's own page (bundled inventory, docs/_intersphinx/README.md), ndarray to NumPy's
    gensim_page = "https://radimrehurek.com/gensim/models/keyedvectors.html#gensim.models.keyedvectors.KeyedVectors"
    assert container.locator(f"a[href='{gensim_page}']").count() >= 1
    ndarray_page = "https://numpy.org/doc/2.4/reference/generated/numpy.ndarray.html#numpy.ndarray"
    assert container.locator(f"a[href='{ndarray_page}']").count() >= 1


@pytest.mark.parametrize("path", ["getting_started.html", "method.html", "api/index.html", "cli.html",
                                  "tutorials/index.html"])
def test_the_other_pages_render_without_console_errors(page, path):
    opened = page.open(path)
    assert opened.locator("h1").first.is_visible()
