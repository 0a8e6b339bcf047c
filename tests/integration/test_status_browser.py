"""The status page in a real browser: headless Chromium (Debian's chromium and
chromium-driver, from deploy/install-deps) driven by selenium loads the daemon's page
served against the session sandbox, reads the trees from the DOM, sees the replica turn
CRITICAL within a refresh of stopping its SQL thread, fits a phone's width, and saves a
screenshot (its path is printed)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service

from tests.helpers import wait_for
from tests.helpers.daemon import Daemon, config_file
from tests.helpers.servers import Sandbox, replicating, run

pytestmark = pytest.mark.integration

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
REFRESH = 2.0  # daemon.status_refresh: the page reloads, and the cache renews, this often


@pytest.fixture()
def browser() -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # the Debian build: selenium downloads nothing
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1000,900", "--disable-gpu"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


_TREE_JS = """
return Array.from(document.querySelectorAll('li.node')).map(li => {
  const parent = li.parentElement.closest('li.node');
  return [li.dataset.node, parent ? parent.dataset.node : null, li.dataset.link,
          li.querySelector(':scope > .card .state').textContent];
});"""


def tree(driver: Any) -> dict[str, tuple[str | None, str, str]]:
    """Every node on the page: name -> (parent node, link kind, state word shown), read in
    one script run so a reload in between cannot tear it."""
    rows = wait_for(lambda: _read(driver, _TREE_JS), what="the page to load")
    return {name: (parent, link, shown) for name, parent, link, shown in rows}


def _read(driver: Any, script: str) -> Any:
    """A script's answer, None while the page is reloading."""
    try:
        return driver.execute_script(script)
    except WebDriverException:
        return None


def replica_shown(driver: Any) -> str | None:
    """The replica's state word, None while the page is reloading."""
    rows = _read(driver, _TREE_JS) or []
    return next((shown for name, _parent, _link, shown in rows if name == "mariadb-replica"),
                None)


def test_status_page_in_chromium(browser: Any, sandbox: Sandbox, tmp_path: Path) -> None:
    d = Daemon(config_file(sandbox, tmp_path / "c.yaml", status_refresh=f"{REFRESH:g}s"),
               tmp_path / "serve.log")
    try:
        browser.get(d.url + "/")
        # The daemon's heartbeat writer starts with it: OK once its first row replicated.
        wait_for(lambda: _read(browser, "return document.title === 'dbgauge: OK' || null"),
                 timeout=30, what="the page to show every node OK")
        assert tree(browser) == {
            "mariadb-primary": (None, "", "OK"),
            "mariadb-replica": ("mariadb-primary", "replica", "OK"),
            "pg-primary": (None, "", "OK"),
            "pg-standby": ("pg-primary", "standby", "OK"),
            "pg-subscriber": ("pg-primary", "subscriber", "OK"),
            "pgbouncer": ("pg-primary", "pooler", "OK"),
        }
        run(sandbox, "mariadb-replica", "STOP SLAVE SQL_THREAD")
        try:
            stopped = time.monotonic()
            # The page reloads itself (meta refresh); the cache it reads is at most REFRESH
            # old: the change shows within one refresh of the page after the cache's.
            wait_for(lambda: True if replica_shown(browser) == "CRITICAL" else None,
                     timeout=2 * REFRESH + 5, what="the replica to turn CRITICAL")
            took = time.monotonic() - stopped
            print(f"\nthe page showed the stopped SQL thread after {took:.1f} s "
                  f"(status_refresh {REFRESH:g} s)")
            card, overall = wait_for(lambda: _read(browser, (
                "return [document.querySelector('li[data-node=\"mariadb-replica\"] > .card')"
                ".innerText, document.getElementById('overall').textContent];")))
            assert "IO Yes, SQL No" in card and "sql-thread-stopped" in card, card
            assert overall == "CRITICAL"
            shot = tmp_path / "status.png"
            assert browser.save_screenshot(str(shot))
            print(f"screenshot: {shot}")
            browser.set_window_size(390, 844)  # a phone
            browser.refresh()
            assert wait_for(lambda: _read(browser, (
                "return document.documentElement.scrollWidth <= window.innerWidth "
                "&& document.querySelector('li.node') !== null || null")))
            phone = tmp_path / "status-phone.png"
            assert browser.save_screenshot(str(phone))
            print(f"screenshot at phone width: {phone}")
        finally:
            run(sandbox, "mariadb-replica", "START SLAVE SQL_THREAD")
        wait_for(lambda: replicating(sandbox), timeout=30)
    finally:
        d.stop()
