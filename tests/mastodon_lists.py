"""Drives edgefeed's Mastodon lists with the Mastodon.py library (pinned, installed into .venv by
scripts/bootstrap). Called by tests/api/lists.rs with the server's base URL, two accounts with
passwords (author, reader), the password, and two more authors' handles; exits non-zero on the
first failure.

Flow: the reader follows three authors, makes two lists, renames one, puts two authors in the
first and one of them in the second too (many-to-many), reads the members and the lists holding
an account, scrolls the first list's timeline in pages of 7 over 23 of its posts (each once,
newest first, none of the unlisted author's), takes a member out, and deletes a list.
"""
import sys

from mastodon import Mastodon, MastodonAPIError, MastodonNotFoundError

base, author_handle, reader_handle, password = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
second_handle, unlisted_handle = sys.argv[5], sys.argv[6]


def check(ok, what):
    if not ok:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


client_id, client_secret = Mastodon.create_app("edgefeed-lists", api_base_url=base, scopes=["read", "write", "follow"])


def login(handle):
    api = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=base, version_check_mode="none")
    api.log_in(handle, password, scopes=["read", "write", "follow"])
    return api


def ids(items):
    return [x["id"] for x in items]


def raises(error, what, call):
    try:
        call()
    except error:
        return
    check(False, what)


reader = login(reader_handle)
a, b, c = login(author_handle), login(second_handle), login(unlisted_handle)
a_id, b_id, c_id = (api.account_verify_credentials()["id"] for api in (a, b, c))
for who in (a_id, b_id, c_id):
    reader.account_follow(who)

close = reader.list_create("close")
check(close["title"] == "close" and close["replies_policy"] == "list" and close["exclusive"] is False, f"a new list: {close}")
close = reader.list_update(close["id"], "closest")
check(reader.list(close["id"])["title"] == "closest", "the rename")
also = reader.list_create("also")
check(ids(reader.lists()) == [close["id"], also["id"]], "the reader's lists, oldest first")

reader.list_accounts_add(close["id"], [a_id, b_id])
reader.list_accounts_add(also["id"], a_id)
check(sorted(ids(reader.list_accounts(close["id"]))) == sorted([a_id, b_id]), "the first list's members")
check(ids(reader.list_accounts(also["id"])) == [a_id], "the second list's member")
check(sorted(ids(reader.account_lists(a_id))) == sorted([close["id"], also["id"]]), "an account in two lists")
check(ids(reader.account_lists(c_id)) == [], "an unlisted account is in no list")
raises(MastodonAPIError, "adding a member twice", lambda: reader.list_accounts_add(close["id"], a_id))
stranger = reader.account_verify_credentials()["id"]  # the reader does not follow themselves
raises(MastodonNotFoundError, "adding an account not followed", lambda: reader.list_accounts_add(close["id"], stranger))

# 23 posts of the list's members, with the unlisted author's in between.
listed = []
for i in range(23):
    listed.append((a if i % 2 else b).status_post(f"listed {i}")["id"])
    if i % 3 == 0:
        c.status_post(f"unlisted {i}")
listed.reverse()

seen, page = [], reader.timeline_list(close["id"], limit=7)
while page:
    check(len(page) <= 7, "a page holds at most the limit")
    seen += ids(page)
    page = reader.fetch_next(page)
check(seen == listed, f"every listed post once, newest first: {len(seen)} of {len(listed)}")
newer = reader.timeline_list(close["id"], since_id=listed[3])
check(ids(newer) == listed[:3], "since_id: the posts above")

reader.list_accounts_delete(close["id"], [b_id])
check(ids(reader.list_accounts(close["id"])) == [a_id], "a member taken out")
only_a = ids(reader.timeline_list(close["id"], limit=40))
check(only_a == [p for p in listed if p in set(ids(a.account_statuses(a_id, limit=40)))], "the timeline follows the members")

reader.list_delete(close["id"])
raises(MastodonNotFoundError, "a deleted list", lambda: reader.list(close["id"]))
raises(MastodonNotFoundError, "a deleted list's timeline", lambda: reader.timeline_list(close["id"]))
check(ids(reader.lists()) == [also["id"]], "the other list stays")
raises(MastodonNotFoundError, "someone else's list", lambda: a.list(also["id"]))
print(f"mastodon.py lists flow ok: {len(seen)} statuses")
