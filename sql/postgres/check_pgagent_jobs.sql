-- dbgauge check pgagent-jobs (checks/health/pgagent_jobs.py), PostgreSQL 13+: pgAgent's
-- failed job steps that ended less than %(seconds)s seconds ago, newest first, as
-- check_postgres' pgagent_jobs reads them: an SQL step returning -1, a batch step returning
-- anything but 0. ended_seconds_ago: from the end of the job's run (start + duration).
-- Needs SELECT on the pgagent schema's tables (in the database pgAgent's extension is in).
SELECT job.jobname, step.jstname, slog.jslresult, slog.jsloutput,
       EXTRACT(EPOCH FROM now() - (jlog.jlgstart + jlog.jlgduration))::float8
           AS ended_seconds_ago
FROM pgagent.pga_job job
JOIN pgagent.pga_joblog jlog ON job.jobid = jlog.jlgjobid
JOIN pgagent.pga_jobstep step ON job.jobid = step.jstjobid
JOIN pgagent.pga_jobsteplog slog ON jlog.jlgid = slog.jsljlgid AND step.jstid = slog.jsljstid
WHERE ((slog.jslresult = -1 AND step.jstkind = 's') OR (slog.jslresult <> 0 AND step.jstkind = 'b'))
  AND EXTRACT(EPOCH FROM now() - (jlog.jlgstart + jlog.jlgduration)) < %(seconds)s
ORDER BY jlog.jlgstart DESC
LIMIT 100
