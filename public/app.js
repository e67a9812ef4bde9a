// edgefeed web client: plain JS over the public API (/v1), no framework, no build step.
// The token lives in localStorage; everything the page shows comes from API reads, and the live
// socket only says that there is something new to read (posts, notifications).
"use strict";

const PAGE = 20;
const TOKEN_KEY = "edgefeed.token";
// This page signs in like any OAuth client: an app registered once per browser (POST
// /api/v1/apps), then the password grant. Its tokens can be revoked one by one at sign-out.
const APP_KEY = "edgefeed.app";
const $ = (id) => document.getElementById(id);

const state = {
  token: localStorage.getItem(TOKEN_KEY),
  me: null,
  next: null, // cursor of the next (older) page; null when the feed is exhausted
  top: null, // newest_cursor: the feed's newest position this page has shown
  loading: false,
  generation: 0,
  done: false,
  shown: new Set(), // post ids on the page
  waiting: [], // newer posts fetched after a live event, shown when the banner is clicked
  gap: false,
  socket: null,
  retryMs: 1000,
  heartbeat: null,
};

class ApiError extends Error {
  constructor(status, problem) {
    // /v1 answers problem+json; /api and /oauth answer Mastodon's {"error", "error_description"}.
    super(problem.detail || problem.error_description || problem.error || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code || problem.error;
  }
}

async function api(method, path, body, anonymous) {
  const headers = {};
  if (state.token && !anonymous) headers.authorization = `Bearer ${state.token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) throw new ApiError(response.status, data || {});
  return data;
}

function showError(error) {
  const box = $("error");
  box.textContent = error ? error.message || String(error) : "";
  box.hidden = !error;
  if (error instanceof ApiError && error.status === 401 && state.token) signOut("Your session ended; sign in again.");
}

// Runs an action, reporting its failure instead of throwing.
function attempt(action) {
  return async (...args) => {
    try {
      showError(null);
      await action(...args);
    } catch (error) {
      showError(error);
    }
  };
}

// ---- session -------------------------------------------------------------------------------

async function start() {
  $("welcome").hidden = !!state.token;
  if (!state.token) return;
  state.me = await api("GET", "/v1/me");
  $("who").textContent = `@${state.me.handle}`;
  $("who").hidden = $("sign-out").hidden = $("notifications-toggle").hidden = false;
  $("app").hidden = false;
  await reloadFeed();
  connectLive();
  loadUnread().catch(showError);
}

async function signUp(event) {
  event.preventDefault();
  const form = event.target;
  const body = { handle: form.handle.value.trim(), password: form.password.value };
  if (form.display_name.value.trim()) body.display_name = form.display_name.value.trim();
  await api("POST", "/v1/users", body);
  await passwordSignIn(body.handle, body.password);
}

async function signIn(event) {
  event.preventDefault();
  await passwordSignIn(event.target.handle.value.trim(), event.target.password.value);
}

// The OAuth client this page is, registered on first use and kept in this browser.
async function client() {
  const saved = JSON.parse(localStorage.getItem(APP_KEY) || "null");
  if (saved) return saved;
  const app = await api("POST", "/api/v1/apps", {
    client_name: "edgefeed web", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write follow",
  }, true);
  const kept = { client_id: app.client_id, client_secret: app.client_secret };
  localStorage.setItem(APP_KEY, JSON.stringify(kept));
  return kept;
}

async function passwordSignIn(handle, password, retried) {
  const app = await client();
  let token;
  try {
    token = await api("POST", "/oauth/token", {
      grant_type: "password", username: handle, password, scope: "read write follow", ...app,
    }, true);
  } catch (error) {
    // An app this server no longer knows (say, its database was reset): register anew, once.
    if (error.code !== "invalid_client" || retried) throw error;
    localStorage.removeItem(APP_KEY);
    return passwordSignIn(handle, password, true);
  }
  state.token = token.access_token;
  localStorage.setItem(TOKEN_KEY, state.token);
  await start();
}

// Revokes this page's token (only this one: other devices stay signed in) and forgets it.
function signOut(message) {
  const token = state.token;
  const app = JSON.parse(localStorage.getItem(APP_KEY) || "null");
  if (token && app && !message) {
    api("POST", "/oauth/revoke", { ...app, token }, true).catch(() => {});
  }
  localStorage.removeItem(TOKEN_KEY);
  state.token = state.me = null;
  closeLive();
  $("app").hidden = $("who").hidden = $("sign-out").hidden = $("notifications-toggle").hidden = true;
  $("welcome").hidden = false;
  $("feed").replaceChildren();
  if (message) {
    $("error").textContent = message;
    $("error").hidden = false;
  }
}

// ---- feed ----------------------------------------------------------------------------------

// Each reload starts a new generation: an answer to a request of an older one is dropped, so a
// page read before a reload cannot set this feed's position or add to it.
async function reloadFeed() {
  state.generation += 1;
  state.loading = false;
  state.next = state.top = null;
  state.done = false;
  state.shown.clear();
  state.waiting = [];
  state.gap = false;
  $("feed").replaceChildren();
  updateBanner();
  await loadOlder();
}

// The next page down (infinite scroll); the first call loads the newest page.
async function loadOlder() {
  if (state.loading || state.done) return;
  const generation = state.generation;
  state.loading = true;
  $("feed-status").textContent = "Loading…";
  try {
    const query = state.next ? `&cursor=${encodeURIComponent(state.next)}` : "";
    const page = await api("GET", `/v1/feed?limit=${PAGE}${query}`);
    if (generation !== state.generation) return;
    if (state.top === null) state.top = page.newest_cursor;
    for (const post of page.items) appendPost(post);
    state.next = page.next_cursor;
    state.done = page.next_cursor === null;
    $("feed-status").textContent = feedStatus(page);
  } finally {
    if (generation === state.generation) state.loading = false;
  }
  if (generation !== state.generation) return;
  // A tall screen may show the sentinel still: keep filling it.
  if (!state.done && isVisible($("more"))) await loadOlder();
}

function feedStatus(page) {
  if (!state.done) return "";
  if (state.shown.size > 0) return "You're all caught up.";
  const reasons = {
    no_follows: "Follow someone to fill your feed.",
    no_posts: "Nobody you follow has posted yet.",
    all_filtered: "Nothing here you can see.",
    rebuilding: "Your feed is being rebuilt; try again in a moment.",
  };
  return reasons[page.empty_reason] || "Nothing here yet.";
}

function isVisible(element) {
  const box = element.getBoundingClientRect();
  return box.top < window.innerHeight && box.bottom >= 0;
}

// Fetches what is newer than the page's top; shown at once, or kept for the banner.
async function fetchNewer(showNow) {
  if (state.top === null) return;
  const generation = state.generation;
  const page = await api("GET", `/v1/feed?limit=100&after=${encodeURIComponent(state.top)}`);
  if (generation !== state.generation) return;
  state.waiting = page.items.filter((post) => !state.shown.has(post.id));
  state.gap = !!page.gap;
  state.waitingTop = page.newest_cursor;
  if (showNow) showWaiting();
  else updateBanner();
}

function showWaiting() {
  if (state.gap) return reloadFeed();
  const feed = $("feed");
  for (const post of [...state.waiting].reverse()) feed.prepend(renderPost(post));
  state.waiting.forEach((post) => state.shown.add(post.id));
  if (state.waitingTop) state.top = state.waitingTop;
  state.waiting = [];
  updateBanner();
}

function updateBanner() {
  const banner = $("new-posts");
  const n = state.waiting.length;
  banner.hidden = n === 0;
  banner.textContent = state.gap ? `${n}+ new posts` : plural(n, "new post");
}

function plural(n, noun) {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function appendPost(post) {
  if (state.shown.has(post.id)) return;
  state.shown.add(post.id);
  $("feed").append(renderPost(post));
}

// ---- live updates --------------------------------------------------------------------------

async function connectLive() {
  closeLive();
  if (!state.token) return;
  let ticket;
  try {
    ticket = (await api("POST", "/v1/feed/live/ticket", {})).ticket;
  } catch (error) {
    return retryLive();
  }
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/v1/feed/live?ticket=${encodeURIComponent(ticket)}`);
  state.socket = socket;
  socket.onopen = () => {
    state.retryMs = 1000;
    // Heartbeat: answered by the server without waking anything.
    state.heartbeat = setInterval(() => socket.readyState === 1 && socket.send("ping"), 30000);
    // Posts that arrived while the socket was away.
    fetchNewer(false).catch(showError);
  };
  socket.onmessage = (event) => {
    if (event.data === "pong") return;
    const message = JSON.parse(event.data);
    if (message.type === "new_posts") fetchNewer(false).catch(showError);
    // Only that there is something new: the count is read again (or the open list).
    if (message.type === "new_notifications") notificationNews().catch(showError);
  };
  socket.onclose = (event) => {
    clearInterval(state.heartbeat);
    if (state.socket !== socket) return;
    state.socket = null;
    // 4001: the token behind the socket ended (expired, revoked, account suspended).
    if (event.code === 4001) signOut("Your session ended; sign in again.");
    else retryLive();
  };
}

function retryLive() {
  if (!state.token) return;
  setTimeout(connectLive, state.retryMs);
  state.retryMs = Math.min(state.retryMs * 2, 30000);
}

function closeLive() {
  const socket = state.socket;
  state.socket = null;
  clearInterval(state.heartbeat);
  if (socket) socket.close(1000);
}

// ---- posts ---------------------------------------------------------------------------------

function renderPost(post) {
  const item = $("post-template").content.firstElementChild.cloneNode(true);
  item.dataset.id = post.id;
  const author = item.querySelector(".author");
  author.textContent = `${post.author.display_name} @${post.author.handle}`;
  author.addEventListener("click", attempt(() => showProfile(post.author.id)));
  const time = item.querySelector("time");
  time.dateTime = post.created_at;
  time.textContent = new Date(post.created_at).toLocaleString();
  item.querySelector(".visibility").textContent = post.visibility === "public" ? "" : `· ${post.visibility}`;
  item.querySelector(".body").textContent = post.body;
  item.querySelector(".media").replaceChildren(...(post.media || []).map(renderImage));
  collapseIfWarned(item, post);
  setLike(item, post.liked_by_me, post.like_count);
  item.querySelector(".comment-count").textContent = post.comment_count;
  item.querySelector(".like").addEventListener("click", attempt(() => toggleLike(item)));
  item.querySelector(".comments-toggle").addEventListener("click", attempt(() => toggleComments(item)));
  item.querySelector(".comment-form").addEventListener("submit", attempt((e) => addComment(e, item)));
  const label = item.querySelector(".comment-form label");
  const input = item.querySelector(".comment-form input");
  input.id = `comment-${post.id}`;
  label.htmlFor = input.id;
  return item;
}

// An attachment: its description is the image's alt text; width and height reserve its space
// before it loads (no jump while scrolling).
function renderImage(media) {
  const img = document.createElement("img");
  img.src = media.url;
  img.alt = media.description || "";
  img.width = media.width;
  img.height = media.height;
  img.loading = "lazy";
  return img;
}

// A post with a content warning shows the warning and keeps the body and its images collapsed
// until opened.
function collapseIfWarned(item, post) {
  if (!post.spoiler_text && !post.sensitive) return;
  const body = item.querySelector(".body");
  const media = item.querySelector(".media");
  const details = document.createElement("details");
  details.className = "warning";
  const summary = document.createElement("summary");
  summary.textContent = post.spoiler_text || "Sensitive content";
  body.replaceWith(details);
  media.remove();
  details.append(summary, body, media);
}

function setLike(item, liked, count) {
  const button = item.querySelector(".like");
  button.setAttribute("aria-pressed", String(liked));
  button.classList.toggle("liked", liked);
  item.querySelector(".like-count").textContent = count;
}

async function toggleLike(item) {
  const liked = item.querySelector(".like").getAttribute("aria-pressed") === "true";
  // seq: the newest click wins even if two requests cross on the way.
  const path = `/v1/posts/${item.dataset.id}/like?seq=${Date.now()}`;
  const result = await api(liked ? "DELETE" : "PUT", path);
  setLike(item, result.liked, result.like_count);
}

async function toggleComments(item) {
  const panel = item.querySelector(".comments");
  const toggle = item.querySelector(".comments-toggle");
  panel.hidden = !panel.hidden;
  toggle.setAttribute("aria-expanded", String(!panel.hidden));
  if (panel.hidden) return;
  const page = await api("GET", `/v1/posts/${item.dataset.id}/comments?limit=50`);
  item.querySelector(".comment-list").replaceChildren(...page.items.map(renderComment));
}

function renderComment(comment) {
  const li = document.createElement("li");
  const who = document.createElement("strong");
  who.textContent = `@${comment.author.handle} `;
  li.append(who, document.createTextNode(comment.body));
  return li;
}

async function addComment(event, item) {
  event.preventDefault();
  const input = event.target.body;
  const comment = await api("POST", `/v1/posts/${item.dataset.id}/comments`, { body: input.value });
  input.value = "";
  item.querySelector(".comment-list").append(renderComment(comment));
  const count = item.querySelector(".comment-count");
  count.textContent = Number(count.textContent) + 1;
}

async function publish(event) {
  event.preventDefault();
  const form = event.target;
  const post = { body: form.body.value, visibility: form.visibility.value };
  if (form.spoiler_text.value.trim()) post.spoiler_text = form.spoiler_text.value;
  const file = form.image.files[0];
  if (file) post.media_ids = [(await upload(file, form.alt.value)).id];
  await api("POST", "/v1/posts", post);
  form.reset();
  await fetchNewer(true);
}

// Uploads an image as the request body (the server tells what it is from its bytes).
async function upload(file, description) {
  const query = description.trim() ? `?description=${encodeURIComponent(description)}` : "";
  const response = await fetch(`/v1/media${query}`, {
    method: "POST",
    headers: { authorization: `Bearer ${state.token}` },
    body: file,
  });
  const data = await response.json();
  if (!response.ok) throw new ApiError(response.status, data || {});
  return data;
}

// ---- notifications -------------------------------------------------------------------------

async function loadUnread() {
  const unread = await api("GET", "/v1/notifications/unread");
  const badge = $("unread");
  badge.textContent = unread.capped ? `${unread.count}+` : String(unread.count);
  badge.hidden = unread.count === 0;
}

async function notificationNews() {
  if (!$("notifications").hidden) await showNotifications();
  else await loadUnread();
}

function describe(n) {
  const who = `${n.actor.display_name} @${n.actor.handle}`;
  if (n.kind === "follow") return [`${who} followed you`, null];
  if (n.kind === "favourite") return [`${who} liked your post`, n.post.body];
  return [`${who} replied`, n.comment.body];
}

function renderNotification(n) {
  const li = document.createElement("li");
  li.dataset.id = n.id;
  const [line, quote] = describe(n);
  const text = document.createElement("p");
  text.textContent = line;
  const time = document.createElement("time");
  time.dateTime = n.created_at;
  time.textContent = ` ${new Date(n.created_at).toLocaleString()}`;
  text.append(time);
  li.append(text);
  if (quote) {
    const q = document.createElement("p");
    q.className = "quote";
    q.textContent = `«${quote.length > 140 ? `${quote.slice(0, 140)}…` : quote}»`;
    li.append(q);
  }
  return li;
}

// Opening the list reads the newest page and moves the read marker to its newest one.
async function showNotifications() {
  const page = await api("GET", `/v1/notifications?limit=${PAGE}`);
  $("notification-list").replaceChildren(...page.items.map(renderNotification));
  $("notifications-status").textContent = page.items.length ? "" : "No notifications yet.";
  $("notifications").hidden = false;
  $("notifications-toggle").setAttribute("aria-expanded", "true");
  if (page.items.length) {
    await api("PUT", "/v1/notifications/marker", { last_read_id: page.items[0].id });
  }
  await loadUnread();
}

async function toggleNotifications() {
  if (!$("notifications").hidden) {
    $("notifications").hidden = true;
    $("notifications-toggle").setAttribute("aria-expanded", "false");
    return;
  }
  await showNotifications();
}

// ---- people --------------------------------------------------------------------------------

async function findPerson(event) {
  event.preventDefault();
  const handle = event.target.handle.value.trim().replace(/^@/, "");
  const user = await api("GET", `/v1/users?handle=${encodeURIComponent(handle)}`);
  await showProfile(user.id);
}

async function showProfile(id) {
  const user = await api("GET", `/v1/users/${id}`);
  const card = $("profile");
  const title = document.createElement("h2");
  title.textContent = `${user.display_name} @${user.handle}`;
  const counts = document.createElement("p");
  counts.textContent = `${plural(user.posts_count, "post")} · ${plural(user.followers_count, "follower")} · ` +
    `${user.following_count} following`;
  const children = [title, counts];
  if (!state.me || user.id !== state.me.id) {
    const follow = document.createElement("button");
    follow.type = "button";
    follow.className = "follow";
    follow.textContent = user.following ? "Unfollow" : "Follow";
    follow.addEventListener("click", attempt(() => setFollow(user, !user.following)));
    children.push(follow);
  }
  const close = document.createElement("button");
  close.type = "button";
  close.className = "link";
  close.textContent = "Close";
  close.addEventListener("click", () => (card.hidden = true));
  children.push(close);
  card.replaceChildren(...children);
  card.hidden = false;
}

async function setFollow(user, follow) {
  await api(follow ? "PUT" : "DELETE", `/v1/me/following/${user.id}`, follow ? {} : undefined);
  await showProfile(user.id);
  await reloadFeed();
}

// ---- wiring --------------------------------------------------------------------------------

$("sign-up").addEventListener("submit", attempt(signUp));
$("sign-in").addEventListener("submit", attempt(signIn));
$("sign-out").addEventListener("click", () => signOut());
$("compose").addEventListener("submit", attempt(publish));
$("find").addEventListener("submit", attempt(findPerson));
$("new-posts").addEventListener("click", attempt(showWaiting));
$("notifications-toggle").addEventListener("click", attempt(toggleNotifications));
$("home-link").addEventListener("click", attempt(async (event) => {
  event.preventDefault();
  if (state.token) await reloadFeed();
}));
new IntersectionObserver((entries) => {
  if (entries.some((entry) => entry.isIntersecting) && state.token) attempt(loadOlder)();
}).observe($("more"));
attempt(start)();
