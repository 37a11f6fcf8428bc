-- redlease fence table for H2: one row per election, holding the newest term token that
-- committed a fenced transaction and how many fenced transactions committed.
CREATE TABLE redlease_fence (
    name VARCHAR(200) NOT NULL PRIMARY KEY,
    token BIGINT NOT NULL,
    stamps BIGINT NOT NULL
);
