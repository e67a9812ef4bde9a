"""Drives edgefeed's Mastodon streaming API with the Mastodon.py library (pinned, installed into
.venv by scripts/bootstrap), which streams over HTTP as server-sent events
(`/api/v1/streaming/user`). Called by tests/api/mastodon.rs with the server's base URL and two
accounts that have passwords; exits non-zero on the first failure.

Flow: the health check; the reader and the author each stream `user`; the author posts, and
the reader's stream gets the status; the reader favourites it, and the author's stream gets the
notification; the author deletes it, and the reader's stream gets the delete.
"""
import sys
import time

from mastodon import Mastodon, StreamListener

base, author_handle, reader_handle, password = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]


def check(ok, what):
    if not ok:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def wait_for(what, probe, seconds=60):
    end = time.monotonic() + seconds
    while not probe():
        check(time.monotonic() < end, f"timed out waiting for {what}")
        time.sleep(0.2)


class Listener(StreamListener):
    def __init__(self):
        super().__init__()
        self.connected, self.updates, self.notifications, self.deletes = False, [], [], []

    def handle_heartbeat(self):
        # The stream opens with a comment line: the connection is up.
        self.connected = True

    def on_update(self, status):
        self.updates.append(status)

    def on_notification(self, notification):
        self.notifications.append(notification)

    def on_delete(self, status_id):
        self.deletes.append(str(status_id))


client_id, client_secret = Mastodon.create_app("edgefeed-stream", api_base_url=base, scopes=["read", "write", "follow"])


def login(handle):
    api = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=base, version_check_mode="none")
    api.log_in(handle, password, scopes=["read", "write", "follow"])
    return api


author, reader = login(author_handle), login(reader_handle)
check(reader.stream_healthy(), "the streaming health check")
reader.account_follow(author.account_verify_credentials()["id"])
reader.timeline_home()
heard_by_reader, heard_by_author = Listener(), Listener()
handles = [reader.stream_user(heard_by_reader, run_async=True), author.stream_user(heard_by_author, run_async=True)]
wait_for("both streams to open", lambda: heard_by_reader.connected and heard_by_author.connected)

post = author.status_post("live from the author", visibility="public")
wait_for("the update", lambda: any(str(s["id"]) == str(post["id"]) for s in heard_by_reader.updates))
status = next(s for s in heard_by_reader.updates if str(s["id"]) == str(post["id"]))
check("live from the author" in status["content"], f"the update carries the status: {status['content']}")

reader.status_favourite(post["id"])
wait_for("the notification", lambda: heard_by_author.notifications)
notification = heard_by_author.notifications[0]
check(notification["type"] == "favourite" and str(notification["status"]["id"]) == str(post["id"]), f"a favourite: {notification}")

author.status_delete(post["id"])
wait_for("the delete", lambda: str(post["id"]) in heard_by_reader.deletes)
check(len(heard_by_author.notifications) == 1, "one notification, once")
for handle in handles:
    handle.close()
print("mastodon.py streaming flow ok")
