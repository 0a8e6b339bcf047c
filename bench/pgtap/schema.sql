-- Benchmark schema for `dbgauge pgtap generate`: a small shop with the object kinds the
-- generator covers (types, defaults, keys, indexes, triggers, functions, views).
CREATE SCHEMA shop;
CREATE TYPE shop.mood AS ENUM ('happy', 'sad');
CREATE TABLE shop.customers (
    id bigserial PRIMARY KEY,
    email varchar(200) NOT NULL UNIQUE,
    name text,
    status text NOT NULL DEFAULT 'active',
    score numeric(10,2) DEFAULT 0,
    tags text[] DEFAULT '{}',
    meta jsonb DEFAULT '{}'::jsonb,
    mood shop.mood DEFAULT 'happy',
    created timestamptz NOT NULL DEFAULT now(),
    updated timestamptz DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE shop.products (
    sku text PRIMARY KEY,
    title text NOT NULL,
    price numeric(12,2) NOT NULL DEFAULT 0,
    active boolean NOT NULL DEFAULT true
);
CREATE TABLE shop.orders (
    id bigserial PRIMARY KEY,
    customer_id bigint NOT NULL REFERENCES shop.customers (id),
    placed timestamptz NOT NULL DEFAULT now(),
    total numeric(12,2)
);
CREATE TABLE shop.order_lines (
    order_id bigint NOT NULL REFERENCES shop.orders (id),
    line int NOT NULL,
    sku text NOT NULL REFERENCES shop.products (sku),
    qty int NOT NULL DEFAULT 1,
    PRIMARY KEY (order_id, line)
);
CREATE INDEX orders_customer_idx ON shop.orders (customer_id);
CREATE INDEX orders_placed_idx ON shop.orders (placed) WHERE total IS NOT NULL;
CREATE INDEX customers_lower_email ON shop.customers (lower(email));
CREATE FUNCTION shop.touch() RETURNS trigger LANGUAGE plpgsql
    AS $$BEGIN NEW.updated := now(); RETURN NEW; END$$;
CREATE FUNCTION shop.order_total(o bigint) RETURNS numeric LANGUAGE sql
    AS 'SELECT sum(p.price * l.qty) FROM shop.order_lines l JOIN shop.products p USING (sku) WHERE l.order_id = o';
CREATE TRIGGER customers_touch BEFORE UPDATE ON shop.customers
    FOR EACH ROW EXECUTE FUNCTION shop.touch();
CREATE VIEW shop.big_orders AS SELECT * FROM shop.orders WHERE total > 100;
