package io.redlease.samples.jdbc;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** An account whose balance the leader credits; one of the two tables a settlement writes. */
@Entity
@Table(name = "jdbc_sample_account")
public class Account {

    @Id private String id;

    private long balance;

    protected Account() {}

    public Account(String id) {
        this.id = id;
    }

    public String getId() {
        return id;
    }

    public long getBalance() {
        return balance;
    }

    void credit(long amount) {
        balance += amount;
    }
}
