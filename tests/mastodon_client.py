"""Drives a running edgefeed through the Mastodon client API with the Mastodon.py library
(pinned, installed into .venv by scripts/bootstrap). Called by tests/api/mastodon.rs with the
server's base URL and two accounts that have passwords; exits non-zero on the first failure.

Flow: register an app, log in with a password (both users), post, follow, read the home
timeline page by page with max_id until it ends (every post exactly once), favourite and
unfavourite (exact counts), bookmark and list bookmarks and favourites, mute and unmute,
reply and read the context, a warned status with an image, revoke a token, delete.
"""
import sys
import urllib.request

from mastodon import Mastodon, MastodonAPIError, MastodonError, MastodonNotFoundError, MastodonUnauthorizedError

base, author_handle, reader_handle, password, posts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])


def check(ok, what):
    if not ok:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


client_id, client_secret = Mastodon.create_app("edgefeed-test", api_base_url=base, scopes=["read", "write", "follow"])
check(client_id and client_secret, "app registered")


def login(handle):
    api = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=base, version_check_mode="none")
    api.log_in(handle, password, scopes=["read", "write", "follow"])
    return api


author, reader = login(author_handle), login(reader_handle)
me = reader.account_verify_credentials()
check(me["username"] == reader_handle, f"verify_credentials is the reader: {me['username']}")

# Wrong password: refused.
try:
    Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=base, version_check_mode="none").log_in(
        reader_handle, password + "x", scopes=["read"])
    check(False, "a wrong password is refused")
except MastodonError:
    pass

# Follow the author through lookup, then the author posts.
target = reader.account_lookup(author_handle)
relationship = reader.account_follow(target["id"])
check(relationship["following"], "following after follow")
check(reader.account_relationships([target["id"]])[0]["following"], "relationships says following")
posted = [author.status_post(f"post {i} from the author", visibility="public") for i in range(posts)]
hidden = author.status_post("only for me", visibility="direct")
check(hidden["visibility"] == "direct", "direct maps to private and back")

# The home timeline, page by page with max_id until it ends: every post exactly once.
seen = []
page = reader.timeline_home(limit=7)
while page:
    seen.extend(s["id"] for s in page)
    page = reader.fetch_next(page)
want = [s["id"] for s in reversed(posted)]
check(seen == want, f"home timeline scroll holds every post once, newest first: {len(seen)} of {len(want)}")
check(hidden["id"] not in seen, "a private post does not reach a follower")

# Favourite / unfavourite, twice each: the count stays exact.
top = posted[-1]
check(reader.status_favourite(top["id"])["favourites_count"] == 1, "favourite counts 1")
check(reader.status_favourite(top["id"])["favourites_count"] == 1, "favouriting again changes nothing")
check(author.status(top["id"])["favourites_count"] == 1, "the author sees 1")
check([a["id"] for a in author.status_favourited_by(top["id"])] == [me["id"]], "favourited_by lists the reader")
check(reader.status_unfavourite(top["id"])["favourites_count"] == 0, "unfavourite counts 0")
check(reader.status_unfavourite(top["id"])["favourites_count"] == 0, "unfavouriting again changes nothing")

# Bookmarks: newest first, scrolled with fetch_next (a signed cursor in max_id), then removed.
saved = posted[:3]
for s in saved:
    check(reader.status_bookmark(s["id"])["bookmarked"], "bookmarked after bookmark")
check(reader.status(saved[0]["id"])["bookmarked"], "a status says it is bookmarked")
marks, page = [], reader.bookmarks(limit=2)
while page:
    marks.extend(s["id"] for s in page)
    page = reader.fetch_next(page)
check(marks == [s["id"] for s in reversed(saved)], f"bookmarks newest first, every one once: {marks}")
check(not reader.status_unbookmark(saved[1]["id"])["bookmarked"], "unbookmark")
check([s["id"] for s in reader.bookmarks()] == [saved[2]["id"], saved[0]["id"]], "unbookmarked leaves the list")
reader.status_favourite(saved[0]["id"])
check([s["id"] for s in reader.favourites()] == [saved[0]["id"]], "favourites lists the liked post")
reader.status_unfavourite(saved[0]["id"])

# Mute the author: their posts leave the home timeline at once, without unfollowing; unmute.
muted = reader.account_mute(target["id"])
check(muted["muting"] and muted["muting_notifications"] and muted["following"], "muting, still following")
check(reader.timeline_home() == [], "a muted author's posts leave the home timeline")
check([a["id"] for a in reader.mutes()] == [target["id"]], "mutes lists the author")
check(not reader.account_unmute(target["id"])["muting"], "unmuted")
check(len(reader.timeline_home(limit=5)) == 5, "the author's posts are back after the unmute")

# A reply (a comment), and the context both ways.
reply = reader.status_post("a reply from the reader", in_reply_to_id=top["id"])
check(reply["in_reply_to_id"] == top["id"], "the reply points at its post")
context = author.status_context(top["id"])
check([s["id"] for s in context["descendants"]] == [reply["id"]], "the post's context lists the reply")
check(author.status(top["id"])["replies_count"] == 1, "replies_count 1")
check([s["id"] for s in reader.status_context(reply["id"])["ancestors"]] == [top["id"]], "the reply's ancestor")

# Deletes: the reply, then the post; both gone.
reader.status_delete(reply["id"])
check(author.status_context(top["id"])["descendants"] == [], "the reply is gone")
deleted = author.status_delete(top["id"])
check(deleted["text"] == f"post {posts - 1} from the author", "delete returns the text (delete and redraft)")
try:
    reader.status(top["id"])
    check(False, "a deleted status is 404")
except MastodonNotFoundError:
    pass

# A status with a content warning keeps it, when posted, read and edited (issue #30).
warned = author.status_post("the butler did it", spoiler_text="mystery spoilers", sensitive=True)
check(warned["spoiler_text"] == "mystery spoilers" and warned["sensitive"], "a warned status keeps its warning")
check(reader.status(warned["id"])["spoiler_text"] == "mystery spoilers", "the reader sees the warning")
edited = author.status_update(warned["id"], "the butler did it", spoiler_text="whodunit")
check(edited["spoiler_text"] == "whodunit" and edited["sensitive"], "an edit changes the warning")
# A warned status with an image (issue #30): uploaded with its description and focus, attached,
# read back by the reader, and its bytes served as they were sent.
png = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000030000000208060000009d74661a00000011"
                    "49444154789c63f8cfc0f01f86199039009b7e0bf572b0b93c0000000049454e44ae426082")
media = author.media_post(png, mime_type="image/png", description="a red dot", focus=(0.5, -0.5))
check(media["type"] == "image" and media["meta"]["original"]["width"] == 3, f"the upload: {media}")
pictured = author.status_post("look", media_ids=[media["id"]], spoiler_text="red", sensitive=True)
check([m["id"] for m in pictured["media_attachments"]] == [media["id"]], "the status carries the image")
seen_media = reader.status(pictured["id"])["media_attachments"][0]
check(seen_media["description"] == "a red dot" and seen_media["url"] == media["url"], "the reader sees it")
with urllib.request.urlopen(seen_media["url"]) as served:
    check(served.read() == png and served.headers["content-type"] == "image/png", "the bytes, as sent")
polled = author.status_post("with a poll", poll=author.make_poll(["yes", "no"], expires_in=300))
check([o["title"] for o in polled["poll"]["options"]] == ["yes", "no"], f"the poll: {polled['poll']}")
reader.poll_vote(polled["poll"]["id"], [1])  # Mastodon.py drops the answer: read it back
voted = reader.poll(polled["poll"]["id"])
check(voted["own_votes"] == [1] and voted["votes_count"] == 1, f"the reader's vote: {voted}")
try:
    author.status_post("a bad poll", poll=author.make_poll(["only"], expires_in=300))
    check(False, "a poll of one option is refused")
except MastodonAPIError as e:
    check("poll" in str(e), f"the refusal names the poll: {e}")

# Revoking the reader's token ends it, and only it.
token = reader.access_token
reader.revoke_access_token()
try:
    Mastodon(access_token=token, api_base_url=base, version_check_mode="none").account_verify_credentials()
    check(False, "a revoked token is refused")
except MastodonUnauthorizedError:
    pass
check(author.account_verify_credentials()["username"] == author_handle, "the author's token still works")
print(f"mastodon.py flow ok: {len(seen)} statuses scrolled")
