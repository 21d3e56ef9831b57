// The older majors are installed under aliases (express4, koa2) that ship no types of their own;
// the APIs used here are typed by the current major's types.
declare module 'express4' {
  import express from 'express';
  export default express;
}
declare module 'koa2' {
  import Koa from 'koa';
  export default Koa;
}
