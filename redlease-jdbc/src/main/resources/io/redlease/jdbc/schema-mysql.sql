-- redlease fence table for MySQL and MariaDB (InnoDB, for row locks): one row per election,
-- holding the newest term token that committed a fenced transaction and how many fenced
-- transactions committed. The name compares case-sensitively (a binary collation), so elections
-- whose names differ only in case get rows of their own.
CREATE TABLE redlease_fence (
    name VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
    token BIGINT NOT NULL,
    stamps BIGINT NOT NULL
) ENGINE=InnoDB;
