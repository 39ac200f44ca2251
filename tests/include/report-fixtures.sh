# SPDX-License-Identifier: GPL-2.0-or-later
# The databases the rollout report is tested on (tests/integration/
# test_report_html.sh and test_report_browser.sh, bench/report/run), each
# made with the real shstkctl; source after lib.sh with $ctl set to
# shstkctl.  (POSIX sh.)
#
#   report_db_empty DB WORK         a scan of an empty tree: schema, no object
#   report_db_realistic DB WORK     the admin test's world (tests/integration/
#                                   test_admin.sh): the fixture tree plus
#                                   programs with hostile names, scanned;
#                                   evidence fed through shstkd's recorder;
#                                   decisions by stage set, allow and deny
#   report_db_synthetic DB WORK N   N executables generated with sqlite3 into
#                                   a schema shstkctl created, with closures,
#                                   a month of decision history, violations

# The hostile names: markup, quotes, an ampersand and a right-to-left
# override (U+202E) that would show "exe.txt" as "txt.exe".
report_hostile_names() {
	printf '%s\n' '<script>alert(1)<' "q\"uo'te&amp;" "$(printf 'rlo\342\200\256txt.exe')"
}

report_db_empty() {
	mkdir -p "$2/empty-root"
	"$ctl" --db "$1" scan --no-packages --no-progress --root "$2/empty-root" / >/dev/null
}

# Moves the history rows with id > $2 (and stage rows with id > $3) back
# $4 days: the commands write the time they run at, and a rollout that
# took a month is what the progress chart is for.  Only times move.
# _report_backdate DB DECISION-MARK STAGE-MARK DAYS: the history rows after
# the marks to noon (UTC) DAYS days ago, a microsecond apart in id order.
# Noon, not "now" shifted: a group written across midnight would otherwise
# span two days (one more progress day in the report).
_report_backdate() {
	sqlite3 "$1" "UPDATE decision_history SET time_us = ((CAST(strftime('%s', 'now') AS INTEGER) / 86400 - $4) * 86400 + 43200) * 1000000 + id WHERE id > $2;
		UPDATE stage_history SET time_us = ((CAST(strftime('%s', 'now') AS INTEGER) / 86400 - $4) * 86400 + 43200) * 1000000 + id WHERE id > $3;"
}

_report_marks() {
	printf '%s %s' "$(sqlite3 "$1" 'SELECT coalesce(max(id), 0) FROM decision_history')" \
		"$(sqlite3 "$1" 'SELECT coalesce(max(id), 0) FROM stage_history')"
}

report_db_realistic() {
	_db=$1
	_w=$2
	_ev="$SHSTK_BUILDDIR/tests/tools/shstk-evidence"
	[ -x "$_ev" ] || { echo "FAIL: $_ev not built"; exit 1; }
	rm -rf "$_w/root"
	cp -a "$SHSTK_FIXTURES/tree/root" "$_w/root"
	# One path per identity (as in test_admin.sh).
	rm -f "$_w/root/usr/sbin/eligible-hard"
	report_hostile_names | while IFS= read -r _n; do
		# a copy with a build-id of its own, so that each is its own identity
		python3 -c 'import hashlib, re, sys
b = open(sys.argv[1], "rb").read()
m = re.search(rb"\x04\x00\x00\x00\x14\x00\x00\x00\x03\x00\x00\x00GNU\x00", b)
assert m, "no GNU build-id note in " + sys.argv[1]
new = hashlib.sha1(sys.argv[3].encode()).digest()
open(sys.argv[2], "wb").write(b[:m.end()] + new + b[m.end() + 20:])' \
			"$_w/root/usr/bin/suspect-ctx" "$_w/root/usr/bin/$_n" "$_n"
		chmod 755 "$_w/root/usr/bin/$_n"
	done
	cat >"$_w/policy.conf" <<POLICY
[policy]
stage = audit
[promotion]
clean-runs = 2
distinct-days = 2
[paths]
database = $_db
allowlist = $_w/allowlist
POLICY
	_P="--policy $_w/policy.conf"
	"$ctl" --db "$_db" scan --no-packages --no-progress --root "$_w/root" / >/dev/null
	_m=$(_report_marks "$_db")
	"$ctl" -q --kernel-features=series --db "$_db" stage set audit --reason 'start the rollout <b>"now"</b>' $_P >/dev/null
	_report_backdate "$_db" ${_m% *} ${_m#* } 20
	# Evidence (2001, as in test_admin.sh): clean runs on two days, an
	# audit-mode violation of suspect-ctx in a run, an ANOM_ABEND hint,
	# a violation of a binary with a hostile name.
	_m=$(_report_marks "$_db")
	"$_ev" "$_db" run /usr/bin/rpath-user 978307200 978307260 0
	"$_ev" "$_db" run /usr/bin/rpath-user 978393600 978393660 0
	"$_ev" "$_db" start /usr/bin/suspect-ctx 978310800 4242 audit
	"$_ev" "$_db" violation /usr/bin/suspect-ctx 978310801 4242 audit,kmsg "near ret" audit continued \
		/usr/bin/suspect-ctx 0x1234 libfakec.so.6 0x56 0x7ffff7ff8ff8
	"$_ev" "$_db" end 4242 978310802 0
	"$_ev" "$_db" violation /usr/bin/static-marked 978400000 777 abend - - - - 0 - 0 0
	_t=978480000
	_pid=4343
	report_hostile_names >"$_w/hostile.txt"
	while IFS= read -r _n; do
		"$_ev" "$_db" violation "/usr/bin/$_n" $_t $_pid audit "near ret" enforce killed \
			"/usr/bin/$_n" 0x99 '<img src=x>.so' 0x10 0x7ffff7ff8ff0
		_t=$((_t + 3600))
		_pid=$((_pid + 1))
	done <"$_w/hostile.txt"
	"$_ev" "$_db" run /usr/bin/eligible 978500000 978500100 0
	"$ctl" -q --kernel-features=series --db "$_db" stage set enforce-verified --reason "audit was clean" $_P >/dev/null
	_report_backdate "$_db" ${_m% *} ${_m#* } 9
	_m=$(_report_marks "$_db")
	"$ctl" -q --db "$_db" allow /usr/bin/suspect-jit --reason "the JIT is shadow-stack aware" $_P >/dev/null
	"$ctl" -q --db "$_db" deny /usr/bin/eligible --reason "vendor says no & <i>why</i>" $_P >/dev/null
	_report_backdate "$_db" ${_m% *} ${_m#* } 2
}

# N executables (N/2 eligible), 200 shared libraries in 40 packages, the
# closures in 50 shared sets; decisions with a history over 30 days, 2 000
# violations over 60 binaries.  Written in one sqlite3 transaction.
report_db_synthetic() {
	_db=$1
	_n=$3
	report_db_empty "$_db" "$2"
	_now=$(($(date +%s) * 1000000))
	sqlite3 "$_db" <<SQL
PRAGMA foreign_keys = OFF;
BEGIN;
INSERT INTO scans(id, started_us, finished_us, roots, elf, duration_us) VALUES (100, $_now, $_now, '/usr', $_n + 200, 1);
WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM i WHERE k < 200)
INSERT INTO objects(id, path, dev, inode, size, mtime_ns, ctime_ns, format, identity, class, machine, e_type, kind,
		    has_x86_feature, x86_feature_1, soname, package, package_source, first_seen_us, last_seen_us)
SELECT k, '/usr/lib/x86_64-linux-gnu/libsyn' || k || '.so.1', 1, k, 1000, 0, 0, 1, 'file:1:' || k || ':1000:0', 2, 62, 3,
       'shlib', 1, CASE WHEN k % 4 = 0 THEN 0 ELSE 3 END, 'libsyn' || k || '.so.1', 'pkg-' || (k % 40), 'dpkg', $_now, $_now
FROM i;
WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM i WHERE k < $_n)
INSERT INTO objects(id, path, dev, inode, size, mtime_ns, ctime_ns, format, identity, class, machine, e_type, kind,
		    has_x86_feature, x86_feature_1, package, package_source, first_seen_us, last_seen_us)
SELECT 1000 + k, '/usr/bin/syn' || k, 1, 1000 + k, 2000, 0, 0, 1, 'file:1:' || (1000 + k) || ':2000:0', 2, 62, 3, 'pie',
       1, CASE WHEN k % 2 = 0 THEN 3 ELSE 0 END, 'app-' || (k % 500), 'dpkg', $_now, $_now
FROM i;
WITH RECURSIVE s(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM s WHERE k < 50)
INSERT INTO closure_sets(id, key) SELECT k, 'syn:' || k FROM s;
WITH RECURSIVE s(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM s WHERE k < 50),
	r(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM r WHERE j < 4)
INSERT INTO closure_set_rows(set_id, idx, name, resolved, resolved_path, via, depth, parent)
SELECT k, j, 'libsyn' || ((k * 4 + j) % 200 + 1) || '.so.1', (k * 4 + j) % 200 + 1,
       '/usr/lib/x86_64-linux-gnu/libsyn' || ((k * 4 + j) % 200 + 1) || '.so.1', 'default', 1, 0
FROM s, r;
INSERT INTO verdicts(object, verdict, reason_idx, reason_name, reason_path, closure_size, closure_set, scan)
SELECT o.id, CASE WHEN (o.id - 1000) % 2 = 0 THEN 'eligible' ELSE 'self-unmarked' END, 0, NULL, NULL, 5,
       (o.id - 1000) % 50 + 1, 100
FROM objects o WHERE o.id > 1000;
INSERT INTO decisions(identity, object, path, state, decision, since_us, reason, flags)
SELECT o.identity, o.id, o.path,
       CASE WHEN (o.id - 1000) % 2 = 1 THEN 'ineligible'
            WHEN (o.id - 1000) % 10 = 2 THEN 'candidate' WHEN (o.id - 1000) % 10 = 4 THEN 'auditing'
            WHEN (o.id - 1000) % 1000 = 0 THEN 'quarantined' ELSE 'verified' END,
       CASE WHEN (o.id - 1000) % 2 = 1 OR (o.id - 1000) % 1000 = 0 THEN 'off'
            WHEN (o.id - 1000) % 10 IN (2, 4) THEN 'audit' ELSE 'enforce' END,
       $_now, 'synthetic', 0
FROM objects o WHERE o.id > 1000;
-- history: first decided on one of 30 days, the promoted ones audited first
INSERT INTO decision_history(identity, time_us, old_state, new_state, old_decision, new_decision, reason)
SELECT identity, $_now - (34 - (object % 30)) * 86400000000, NULL,
       CASE WHEN state = 'ineligible' THEN 'ineligible' ELSE 'candidate' END, NULL,
       CASE WHEN state = 'ineligible' THEN 'off' ELSE 'audit' END, 'synthetic'
FROM decisions;
INSERT INTO decision_history(identity, time_us, old_state, new_state, old_decision, new_decision, reason)
SELECT identity, $_now - (34 - (object % 30)) * 86400000000 + (object % 7 + 1) * 86400000000 / 2, 'candidate', state,
       'audit', decision, 'synthetic'
FROM decisions WHERE state NOT IN ('ineligible', 'candidate');
INSERT INTO stage_history(time_us, old_stage, new_stage, user, uid, reason)
VALUES ($_now - 30 * 86400000000, NULL, 'audit', 'root', 0, 'synthetic start'),
       ($_now - 12 * 86400000000, 'audit', 'enforce-verified', 'root', 0, 'synthetic');
WITH RECURSIVE v(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM v WHERE k < 2000)
INSERT INTO violations(id, time_us, pid, tid, comm, exe_path, identity, object, ip_object, ip_offset, ret_object,
		       ret_offset, kind, mode, action, sources)
SELECT k, $_now - (k % 25) * 86400000000, 10000 + k, 10000 + k, 'syn' || (k % 60 * 1000 + 2),
       '/usr/bin/syn' || (k % 60 * 1000 + 2), 'file:1:' || (1002 + k % 60 * 1000) || ':2000:0', 1002 + k % 60 * 1000,
       'libsyn' || (k % 13 + 1) || '.so.1', k * 16, 'libsyn' || (k % 7 + 1) || '.so.1', k * 8, 'near ret', 'audit',
       'continued', CASE WHEN k % 3 = 0 THEN 4 ELSE 3 END
FROM v;
COMMIT;
SQL
}
