"""Drives a running edgefeed with the `toot` command-line client (pinned, installed into .venv
by scripts/bootstrap), as a person would from a shell. Called by tests/api/mastodon.rs with the
server's base URL and two accounts that have passwords; exits non-zero on the first failure.

Flow: log in with a password (both users, each with its own config dir), post, follow by
handle, read the home timeline, favourite, reply, read the thread, delete, unfollow.
"""
import json
import os
import subprocess
import sys
import tempfile

base, author, reader, password = sys.argv[1:5]
toot_bin = os.path.join(os.path.dirname(sys.executable), "toot")


def toot(who, *args):
    env = dict(os.environ, XDG_CONFIG_HOME=homes[who], NO_COLOR="1", TERM="dumb")
    done = subprocess.run([toot_bin, *args], env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        print(f"FAILED: toot {' '.join(args)}\n{done.stdout}\n{done.stderr}", file=sys.stderr)
        sys.exit(1)
    return done.stdout


def check(ok, what):
    if not ok:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


homes = {who: tempfile.mkdtemp(prefix=f"toot-{who}-") for who in (author, reader)}
for who in (author, reader):
    toot(who, "login_cli", "--instance", base, "--email", who, "--password", password)
    check(f"@{who}" in toot(who, "whoami"), f"whoami names {who}")

posted = json.loads(toot(author, "post", "--json", "hello from toot"))
check(posted["content"] == "<p>hello from toot</p>", "toot post")
followed = json.loads(toot(reader, "follow", "--json", author))
check(followed["following"], "toot follow by handle")
home = toot(reader, "timeline", "--once", "--count", "10")
check("hello from toot" in home, f"the post in toot's home timeline:\n{home}")
liked = json.loads(toot(reader, "favourite", "--json", posted["id"]))
check(liked["favourites_count"] == 1 and liked["favourited"], "toot favourite")
reply = json.loads(toot(reader, "post", "--json", "--reply-to", posted["id"], "a reply from toot"))
check(reply["in_reply_to_id"] == posted["id"], "toot reply")
thread = toot(author, "thread", posted["id"])
check("a reply from toot" in thread, f"toot thread shows the reply:\n{thread}")
toot(author, "delete", posted["id"])
toot(reader, "unfollow", author)
print("toot flow ok")
