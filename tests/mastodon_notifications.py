"""Drives edgefeed's Mastodon notifications and read markers with the Mastodon.py library
(pinned, installed into .venv by scripts/bootstrap). Called by tests/api/mastodon.rs with the
server's base URL and two accounts that have passwords; exits non-zero on the first failure.

Flow: the reader follows the author, favourites and replies to the author's post; the author
sees exactly one follow, favourite and mention, filters them by type, pages them with
fetch_next, sets and reads markers; an unfavourite and a deleted reply take theirs away; a
dismiss and a clear; a block hides the rest.
"""
import sys
import time

from mastodon import Mastodon, MastodonNotFoundError

base, author_handle, reader_handle, password = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]


def check(ok, what):
    if not ok:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


client_id, client_secret = Mastodon.create_app("edgefeed-notify", api_base_url=base, scopes=["read", "write", "follow"])


def login(handle):
    # Without a version check Mastodon.py dismisses through the pre-3.1 form route; both work.
    api = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=base, version_check_mode="none")
    api.log_in(handle, password, scopes=["read", "write", "follow"])
    return api


def wait_for(what, probe, seconds=60):
    """Polls until probe() is truthy (follows reach the author's side through an event)."""
    end = time.monotonic() + seconds
    while True:
        value = probe()
        if value:
            return value
        check(time.monotonic() < end, f"timed out waiting for {what}")
        time.sleep(0.2)


def types(notifications):
    return [n["type"] for n in notifications]


author, reader = login(author_handle), login(reader_handle)
author_id = author.account_verify_credentials()["id"]
reader_id = reader.account_verify_credentials()["id"]
post = author.status_post("notice me", visibility="public")
reader.account_follow(author_id)
reader.status_favourite(post["id"])
reply = reader.status_post("noticed", in_reply_to_id=post["id"])

got = wait_for("three notifications", lambda: (lambda n: n if types(n) == ["mention", "favourite", "follow"] else None)(author.notifications()))
check(all(n["account"]["id"] == reader_id for n in got), "each names the reader")
check(got[0]["status"]["id"] == reply["id"] and got[0]["status"]["in_reply_to_id"] == post["id"], "the mention carries the reply")
check(got[1]["status"]["id"] == post["id"], "the favourite carries the post")
check("status" not in got[2] or got[2]["status"] is None, "a follow has no status")
check(author.notifications(id=got[1]["id"])["type"] == "favourite", "one notification by id")
check(types(author.notifications(types=["mention"])) == ["mention"], "types[]")
check(types(author.notifications(exclude_types=["follow"])) == ["mention", "favourite"], "exclude_types[]")
check(types(author.notifications(types=["reblog"])) == [], "a type edgefeed never makes matches nothing")
check(types(author.notifications(account_id=reader_id)) == ["mention", "favourite", "follow"], "account_id")
check(reader.notifications() == [], "the reader was notified of nothing")

# Paging with limit=1 and fetch_next: each once, newest first; min_id reads upward.
seen, page = [], author.notifications(limit=1)
while page:
    seen.extend(n["id"] for n in page)
    page = author.fetch_next(page)
check(seen == [n["id"] for n in got], f"fetch_next pages each once: {seen}")
check([n["id"] for n in author.notifications(min_id=got[2]["id"], limit=1)] == [got[1]["id"]], "min_id: the one just above")
check([n["id"] for n in author.notifications(max_id=got[0]["id"], since_id=got[2]["id"])] == [got[1]["id"]], "max_id with since_id: between")

# A repeated favourite adds nothing; an unfavourite and a deleted reply take theirs away.
reader.status_favourite(post["id"])
check(types(author.notifications()) == ["mention", "favourite", "follow"], "a repeated favourite adds nothing")
reader.status_unfavourite(post["id"])
reader.status_delete(reply["id"])
check(types(author.notifications()) == ["follow"], "unfavourite and delete take theirs away")

# Markers: set, read back, version moves on.
first = author.markers_set("notifications", got[2]["id"])
check(str(first["notifications"]["last_read_id"]) == str(got[2]["id"]), f"markers_set answers the marker: {first}")
second = author.markers_set(["notifications", "home"], [got[2]["id"], post["id"]])
markers = author.markers_get(["home", "notifications"])
check(markers["notifications"]["version"] == first["notifications"]["version"] + 1, f"version moves on: {markers}")
check(str(markers["home"]["last_read_id"]) == str(post["id"]), "home marker stored")
check(second["home"]["version"] == 1, "a first marker has version 1")

# Dismiss (Mastodon.py picks the legacy form route here), clear, and a block hiding the rest.
reader.status_favourite(post["id"])
fav = wait_for("the new favourite", lambda: [n for n in author.notifications() if n["type"] == "favourite"])
author.notifications_dismiss(fav[0]["id"])
check(types(author.notifications()) == ["follow"], "dismissed")
try:
    author.notifications(id=fav[0]["id"])
    check(False, "a dismissed notification is gone")
except MastodonNotFoundError:
    pass
author.account_block(reader_id)
check(author.notifications() == [], "a block hides what the blocked made")
author.account_unblock(reader_id)
author.notifications_clear()
check(author.notifications() == [], "cleared")
print("mastodon.py notifications flow ok")
