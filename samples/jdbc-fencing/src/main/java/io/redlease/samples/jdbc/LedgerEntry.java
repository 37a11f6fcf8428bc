package io.redlease.samples.jdbc;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** A ledger line for every credit, with the term that wrote it; the second table. */
@Entity
@Table(name = "jdbc_sample_ledger")
public class LedgerEntry {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long id;

    private String accountId;

    private long amount;

    private long token;

    private String note;

    private Instant createdAt;

    protected LedgerEntry() {}

    public LedgerEntry(String accountId, long amount, long token, String note) {
        this.accountId = accountId;
        this.amount = amount;
        this.token = token;
        this.note = note;
        this.createdAt = Instant.now();
    }

    public String getAccountId() {
        return accountId;
    }

    public long getAmount() {
        return amount;
    }

    public long getToken() {
        return token;
    }

    public String getNote() {
        return note;
    }

    public Instant getCreatedAt() {
        return createdAt;
    }
}
