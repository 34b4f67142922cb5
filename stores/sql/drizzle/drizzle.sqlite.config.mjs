// Development only: drizzle-kit's configuration for sqlite, used by generate.ts.
export default {
  dialect: "sqlite",
  schema: process.env.PORTCULLIS_SCHEMA ?? "../schema/sqlite.ts",
  out: "../migrations/sqlite",
};
