"""The public legal pages loaded in headless Chromium (Debian's `chromium`): the DOM as the
browser built it, checked for its headings and contact links, and a phone-sized screenshot saved
as a test artifact (`.local/results/artifacts/`)."""
import datetime
import html.parser
import os
import re
import shutil
import subprocess
import zoneinfo

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (deploy/lib/install-deps installs it)")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions", "--hide-scrollbars"]


class Outline(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.headings, self.links, self.scripts, self.lang, self.inside = [], [], 0, None, None
        self.inline_scripts, self.times = 0, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.lang = attrs.get("lang")
        if tag in ("h1", "h2", "h3", "h4"):
            self.headings.append([int(tag[1]), ""])
            self.inside = "h"
        if tag == "a":
            self.links.append(attrs.get("href", ""))
        if tag == "script" and "src" not in attrs:
            self.inline_scripts += 1
        elif tag in ("script", "iframe", "img", "link", "object"):
            self.scripts += 1
        if tag == "time":
            self.times.append([attrs.get("datetime"), ""])
            self.inside = "time"

    def handle_endtag(self, tag):
        if tag in ("h1", "h2", "h3", "h4", "time"):
            self.inside = None

    def handle_data(self, data):
        if self.inside == "h":
            self.headings[-1][1] += data
        if self.inside == "time":
            self.times[-1][1] += data


# The reader's zone for the "Last Updated" check: well west of UTC, where a UTC date shows wrong.
READER_ZONE = "America/Los_Angeles"


def chromium(*arguments, zone=None):
    env = dict(os.environ, TZ=zone) if zone else None
    return subprocess.run([CHROMIUM, *FLAGS, *arguments], capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize("page,title,contact", [
    ("privacy", "Privacy Policy", "mailto:privacy@recruitingcompass.com"),
    ("terms", "Terms and Conditions", "mailto:"),
])
def test_page_in_a_real_browser(stack, artifacts, page, title, contact):
    url = f"{stack.url}/legal/{page}"
    dom = chromium("--enable-logging=stderr", "--v=0", "--dump-dom", url, zone=READER_ZONE)
    assert dom.returncode == 0, dom.stderr[-2000:]
    outline = Outline()
    outline.feed(dom.stdout)
    assert outline.lang == "en"
    levels = [level for level, _ in outline.headings]
    assert levels.count(1) == 1 and levels[0] == 1 and outline.headings[0][1].strip() == title
    # Ordered headings: never deeper by more than one level.
    assert all(b - a <= 1 for a, b in zip(levels, levels[1:]))
    assert levels.count(2) >= 11
    assert any(link.startswith(contact) for link in outline.links)
    # Nothing loaded; the one inline script is the page's date script (the CSP allows it by hash).
    assert outline.scripts == 0 and outline.inline_scripts == 1
    assert "Last Updated:" in dom.stdout
    # "Last Updated" shows the publication instant's date in the reader's zone.
    assert len(outline.times) == 1
    instant, shown = outline.times[0]
    if "T" in instant:
        published = datetime.datetime.fromisoformat(instant.replace("Z", "+00:00"))
        local = published.astimezone(zoneinfo.ZoneInfo(READER_ZONE))
        assert shown.strip() == f"{local:%B} {local.day}, {local.year}", (instant, shown)
    else:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", instant)
    # The strict policy let the page's own stylesheet apply: no violation in the console.
    assert "Content Security Policy" not in dom.stderr and "Refused to" not in dom.stderr
    shot = artifacts / f"legal-{page}.png"
    result = chromium(f"--screenshot={shot}", "--window-size=390,2200", url)
    assert result.returncode == 0, result.stderr[-2000:]
    assert shot.stat().st_size > 10_000
