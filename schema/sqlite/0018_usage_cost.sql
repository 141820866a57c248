-- Budgets ([personal] 1): each use's model and cost, and the day a group chat's use counts on.
-- Mirrors schema/postgres/0018_usage_cost.sql.
-- From here `day` is the person's own day (their time zone where Kindred knows it, else UTC), so
-- that a person's budget resets at their midnight and every report sums the same days; rows
-- written before were UTC days. `group_day` is the UTC day, for the group chat's budget (NULL in
-- a private chat). `cost` is what the use cost at the prices of the time, in the models list's
-- currency (0 where no price is given); `model` the model that answered ('' where none did).
ALTER TABLE usage_records ADD COLUMN model TEXT NOT NULL DEFAULT '';
ALTER TABLE usage_records ADD COLUMN cost REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN group_day TEXT;
UPDATE usage_records SET group_day = day WHERE group_id IS NOT NULL;
DROP INDEX usage_records_group_day;
CREATE INDEX usage_records_group_day ON usage_records(group_id, group_day) WHERE group_id IS NOT NULL;
