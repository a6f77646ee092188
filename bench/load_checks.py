"""What bench/load.py checks after a run: the database against what the annotators were told, and the CPU used."""

from __future__ import annotations

from bench.infra import Granian, Gunicorn, PrivatePostgres
from bench.load_annotators import Stats


# --- checks in the database --------------------------------------------------------------------------

def verify(database_url: str, stats: Stats) -> dict:
    import psycopg

    from annotator.domain import protocol

    url = database_url.replace("postgres://", "postgresql://", 1)
    problems = {}
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        ids = list(stats.acked)
        cur.execute(
            "SELECT request_id, count(*) FROM annotator_annotationevent WHERE request_id = ANY(%s) GROUP BY request_id",
            (ids,),
        )
        counts = dict(cur.fetchall())
        problems["acknowledged_missing"] = sum(1 for r in ids if r not in counts)
        problems["acknowledged_stored_twice"] = sum(1 for r in ids if counts.get(r, 0) > 1)
        cur.execute(
            "SELECT count(*) FROM (SELECT assignment_id, request_id FROM annotator_annotationevent "
            "WHERE request_id <> '' GROUP BY assignment_id, request_id HAVING count(*) > 1) AS d"
        )
        problems["duplicate_request_ids"] = cur.fetchone()[0]
        # The final label of every sentence the annotator finished is the label chosen.
        keys = list(stats.chosen)
        cur.execute(
            "SELECT assignment_id, sentence_id, label, path FROM annotator_sentenceannotation "
            "WHERE assignment_id = ANY(%s)",
            ([a for a, _ in keys],),
        )
        stored = {(a, s): (label, path) for a, s, label, path in cur.fetchall()}
        wrong = 0
        for key, label in stats.chosen.items():
            got = stored.get(key)
            if got is None or got[0] != label or protocol.label_of(got[1]) != label:
                wrong += 1
        problems["finished_sentences_with_a_different_label"] = wrong
        # Every submitted turn is complete: each of its sentences has a label.
        cur.execute(
            """
            SELECT a.id FROM annotator_assignment a
            JOIN annotator_sentence s ON s.turn_id = a.turn_id
            LEFT JOIN annotator_sentenceannotation sa ON sa.assignment_id = a.id AND sa.sentence_id = s.id
            WHERE a.status = 'submitted' AND (sa.id IS NULL OR sa.label = '')
            GROUP BY a.id
            """
        )
        problems["submitted_turns_incomplete"] = len(cur.fetchall())
        cur.execute("SELECT id FROM annotator_assignment WHERE status = 'submitted' AND id = ANY(%s)",
                    (stats.submitted,))
        problems["acknowledged_submits_not_submitted"] = len(stats.submitted) - len(cur.fetchall())
        cur.execute(
            """
            SELECT count(*) FROM (
              SELECT a.turn_id FROM annotator_assignment a
              JOIN annotator_project p ON p.id = a.project_id
              WHERE a.status IN ('assigned', 'in_progress', 'submitted') AND NOT a.is_qualification
              GROUP BY a.turn_id, p.overlap HAVING count(*) > p.overlap
            ) AS o
            """
        )
        problems["turns_over_overlap"] = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM annotator_annotationevent WHERE action = 'answer'")
        problems_info = {"answer_events_in_db": cur.fetchone()[0]}
        cur.execute("SELECT count(*), count(DISTINCT annotator_id) FROM annotator_assignment")
        assignments, holders = cur.fetchone()
        problems_info.update({"assignments": assignments, "annotators_with_work": holders})
    return {"problems": problems, "info": problems_info}


def server_cpu_seconds(server: Gunicorn | Granian, pg: PrivatePostgres) -> dict:
    """CPU seconds used so far by the app (server process and workers) and the database (postmaster and backends).

    The machine is shared with other engineers' test runs, so wall-clock
    figures depend on their load; CPU time per decision does much less.
    """
    import psutil

    def tree(pid):
        total = 0.0
        try:
            root = psutil.Process(pid)
            for proc in [root, *root.children(recursive=True)]:
                try:
                    times = proc.cpu_times()
                    total += times.user + times.system + times.children_user + times.children_system
                except psutil.NoSuchProcess:
                    pass
        except psutil.NoSuchProcess:
            pass
        return total

    pg_pid = None
    pid_file = pg.data / "postmaster.pid"
    if pid_file.exists():
        pg_pid = int(pid_file.read_text().split()[0])
    return {"app": tree(server.proc.pid), "database": tree(pg_pid) if pg_pid else 0.0}
