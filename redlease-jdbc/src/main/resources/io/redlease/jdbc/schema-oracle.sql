-- redlease fence table for Oracle: one row per election, holding the newest term token that
-- committed a fenced transaction and how many fenced transactions committed.
CREATE TABLE redlease_fence (
    name VARCHAR2(200 CHAR) NOT NULL PRIMARY KEY,
    token NUMBER(19) NOT NULL,
    stamps NUMBER(19) NOT NULL
);
