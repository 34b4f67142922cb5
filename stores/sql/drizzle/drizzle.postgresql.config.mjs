// Development only: drizzle-kit's configuration for postgresql, used by generate.ts.
export default {
  dialect: "postgresql",
  schema: process.env.PORTCULLIS_SCHEMA ?? "../schema/postgresql.ts",
  out: "../migrations/postgresql",
};
