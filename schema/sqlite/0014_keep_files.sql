-- /privacy files keep|delete ([media]): whether the files a person sends are kept (under the data
-- dir, until they /forget them) or deleted once read. Mirrors schema/postgres/0014_keep_files.sql.
-- NULL or 0: deleted (the default).
ALTER TABLE users ADD COLUMN keep_files INTEGER;
