/// The one stylesheet and the one script (no framework, nothing from another site). The script only adds
/// what the server-rendered pages cannot do alone: live progress and new issues from `/events`.
enum StaticAssets {
    static let css = #"""
        :root { --bg: #fafaf7; --fg: #1d1d1b; --muted: #5a5a55; --card: #fff; --line: #d8d8d0; --accent: #0b5cad;
          --new: #0a7a3c; --failed: #b3261e; --pinned: #7a4b00; --downloading: #0b5cad; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.45 system-ui, sans-serif; background: var(--bg); color: var(--fg); }
        a { color: var(--accent); }
        header.top { background: #1d1d1b; padding: .5rem 1rem; }
        header.top nav { display: flex; gap: 1rem; flex-wrap: wrap; }
        header.top a { color: #fff; text-decoration: none; font-weight: 600; }
        header.top a[aria-current="page"] { text-decoration: underline; }
        main { padding: 1rem; max-width: 1200px; margin: 0 auto; }
        h1 { font-size: 1.5rem; margin: .25rem 0 1rem; overflow-wrap: anywhere; }
        form.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin-bottom: .5rem; }
        form.filters label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); }
        input, select, textarea, button, .button { font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 4px; background: #fff; color: var(--fg); max-width: 100%; }
        button, .button { cursor: pointer; background: #ececE6; text-decoration: none; display: inline-block; }
        .danger { color: var(--failed); }
        .count { color: var(--muted); margin: .25rem 0 .75rem; }
        ul.shelf { list-style: none; margin: 0; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 1rem; }
        .card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; overflow: hidden; display: flex; flex-direction: column; }
        .card .cover img { display: block; width: 100%; height: auto; aspect-ratio: 3 / 4; object-fit: cover; background: #ddd; }
        .card .meta { padding: .4rem .5rem .6rem; display: flex; flex-direction: column; gap: .15rem; font-size: .85rem; }
        .card .name { font-weight: 600; overflow-wrap: anywhere; }
        .date, .pub { color: var(--muted); }
        .badges { display: flex; flex-wrap: wrap; gap: .25rem; }
        .badge { font-size: .72rem; font-weight: 700; text-transform: uppercase; letter-spacing: .03em; padding: .05rem .35rem; border-radius: 3px; border: 1px solid currentColor; }
        .badge.new { color: var(--new); } .badge.failed { color: var(--failed); } .badge.pinned { color: var(--pinned); }
        .badge.downloading { color: var(--downloading); } .badge.pending, .badge.paused, .badge.gone { color: var(--muted); }
        .badge.available, .badge.downloaded, .badge.unpacked, .badge.active { color: var(--new); }
        progress { width: 100%; height: .6rem; }
        .pager { display: flex; justify-content: space-between; margin: 1rem 0; }
        article.issue { display: flex; gap: 1.5rem; flex-wrap: wrap; }
        .big-cover { width: 256px; max-width: 100%; height: auto; border: 1px solid var(--line); }
        .details { flex: 1 1 300px; min-width: 0; }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
        dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
        .actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
        .actions form { margin: 0; }
        ul.assets, ul.files, ul.subscriptions { padding-left: 0; list-style: none; }
        ul.assets li, ul.files li, ul.subscriptions li { border-bottom: 1px solid var(--line); padding: .5rem 0; display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: center; overflow-wrap: anywhere; }
        .url { color: var(--muted); font-size: .85rem; word-break: break-all; }
        .error { color: var(--failed); }
        .notice { background: #eef5ff; border: 1px solid #b8d0ee; padding: .5rem; border-radius: 4px; }
        audio, video { max-width: 100%; }
        form.add, form.sync-all { margin: .5rem 0; display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; }
        form.add label { display: flex; flex-direction: column; flex: 1 1 240px; }
        @media (max-width: 480px) { main { padding: .5rem; } ul.shelf { grid-template-columns: repeat(2, 1fr); gap: .5rem; } }
        """#

    static let javaScript = #"""
        "use strict";
        (function () {
          // An OPML file chosen on the subscriptions page is read into the form's text (no upload format).
          var opmlFile = document.getElementById("opml-file");
          if (opmlFile && window.FileReader) {
            opmlFile.addEventListener("change", function () {
              var file = opmlFile.files && opmlFile.files[0];
              if (!file) return;
              var reader = new FileReader();
              reader.onload = function () { document.getElementById("opml-text").value = reader.result; };
              reader.readAsText(file);
            });
          }
        })();
        (function () {
          var shelf = document.getElementById("shelf");
          var issue = document.querySelector("article.issue");
          if (!shelf && !issue) return;
          if (!window.EventSource) return;
          var since = shelf ? shelf.getAttribute("data-cursor") : "";
          var source = new EventSource("/events" + (since ? "?since=" + encodeURIComponent(since) : ""));

          function el(tag, cls, text) {
            var e = document.createElement(tag);
            if (cls) e.className = cls;
            if (text !== undefined) e.textContent = text;
            return e;
          }
          // The page's "1–N of T issues" line, kept true as issues arrive.
          function countOne() {
            var count = document.getElementById("count");
            if (!count) return;
            var total = Number(count.getAttribute("data-total") || 0) + 1;
            var last = Number(count.getAttribute("data-last") || 0) + 1;
            count.setAttribute("data-total", total);
            count.setAttribute("data-last", last);
            count.textContent = "1–" + last + " of " + total + " issue" + (total === 1 ? "" : "s");
          }
          function badge(cls, text) { return el("span", "badge " + cls, text); }

          // Built with the DOM, never from HTML strings: names come from feeds.
          function card(key, report) {
            var li = el("li", "card");
            li.setAttribute("data-key", key);
            li.setAttribute("data-status", report.status);
            var cover = el("a", "cover");
            cover.href = "/issues/" + key;
            cover.tabIndex = -1;
            cover.setAttribute("aria-hidden", "true");
            var img = el("img");
            img.src = "/covers/" + key; img.alt = ""; img.width = 128; img.height = 170;
            cover.appendChild(img);
            var meta = el("div", "meta");
            var name = el("a", "name", report.name);
            name.href = "/issues/" + key;
            meta.appendChild(name);
            meta.appendChild(el("span", "date", report.date));
            if (report.publication) meta.appendChild(el("span", "pub", report.publication));
            var badges = el("span", "badges");
            badges.appendChild(badge("new", "new"));
            meta.appendChild(badges);
            li.appendChild(cover);
            li.appendChild(meta);
            setStatus(li, report.status);
            return li;
          }

          function setStatus(node, status) {
            node.setAttribute("data-status", status);
            var badges = node.querySelector(".badges");
            if (!badges) return;
            ["downloading", "failed", "pending"].forEach(function (s) {
              var b = badges.querySelector(".badge." + s);
              if (b) b.remove();
            });
            var shown = status === "none" ? "pending" : status;
            if (shown !== "available") badges.appendChild(badge(shown, shown));
            var bar = node.querySelector("progress");
            if (status === "available" && bar) bar.remove();
          }

          function progressBar(node, label) {
            var bar = node.querySelector("progress");
            if (!bar) {
              bar = el("progress");
              bar.setAttribute("aria-label", "Download of " + label);
              (node.querySelector(".meta") || node).appendChild(bar);
            }
            return bar;
          }

          // The shelf's filters (ShelfQuery.page) applied to a new issue's report: a new issue is unread.
          function matchesFilters(report, data) {
            var status = shelf.getAttribute("data-filter-status");
            if (status === "read") return false;
            if (status === "pinned" && !report.pinned) return false;
            if (status && status !== "new" && status !== "pinned" && (status === "pending" ? "none" : status) !== report.status) return false;
            var publication = shelf.getAttribute("data-filter-publication");
            if (publication !== null && publication !== data.publication) return false;
            var subscription = shelf.getAttribute("data-filter-subscription");
            if (subscription !== null && !(report.origin && report.origin.subscription === subscription)) return false;
            var q = shelf.getAttribute("data-filter-q");
            if (q !== null && report.name.toLowerCase().indexOf(q.toLowerCase()) < 0) return false;
            return true;
          }

          function onIssueEvent(message) {
            var data = JSON.parse(message.data);
            var report = data.event.issue;
            if (!report) return;
            var kind = data.event.kind;
            if (shelf) {
              var existing = shelf.querySelector('[data-key="' + data.key + '"]');
              if (kind === "issue.removed") { if (existing) existing.remove(); return; }
              if (!existing && kind === "issue.added" && shelf.getAttribute("data-live") === "1" && matchesFilters(report, data)) {
                shelf.insertBefore(card(data.key, report), shelf.firstChild);
                countOne();
              } else if (existing) {
                setStatus(existing, report.status);
              }
            } else if (issue && issue.getAttribute("data-key") === data.key) {
              if (kind === "issue.removed") { window.location.assign("/"); return; }
              if (kind === "issue.available" || kind === "issue.failed") { window.location.reload(); }
            }
          }
          ["issue.added", "issue.available", "issue.failed", "issue.removed"].forEach(function (kind) {
            source.addEventListener(kind, onIssueEvent);
          });

          source.addEventListener("progress", function (message) {
            var data = JSON.parse(message.data);
            data.assets.forEach(function (a) {
              if (shelf) {
                var node = shelf.querySelector('[data-key="' + a.key + '"]');
                if (!node) return;
                if (node.getAttribute("data-status") !== "downloading") setStatus(node, "downloading");
                var name = node.querySelector(".name");
                var bar = progressBar(node, name ? name.textContent : "");
                bar.max = Math.max(a.expected || a.received || 1, 1);
                bar.value = a.received;
              } else if (issue && issue.getAttribute("data-key") === a.key) {
                var row = document.querySelector('[data-asset="' + a.asset + '"]');
                if (!row) return;
                var bar2 = progressBar(row, a.asset);
                bar2.max = Math.max(a.expected || a.received || 1, 1);
                bar2.value = a.received;
                var bytes = row.querySelector(".bytes");
                if (bytes) bytes.textContent = a.received + " B / " + (a.expected === null ? "?" : a.expected + " B");
              }
            });
          });
        })();
        """#
}
