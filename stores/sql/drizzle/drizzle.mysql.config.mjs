// Development only: drizzle-kit's configuration for mysql, used by generate.ts.
export default {
  dialect: "mysql",
  schema: process.env.PORTCULLIS_SCHEMA ?? "../schema/mysql.ts",
  out: "../migrations/mysql",
};
