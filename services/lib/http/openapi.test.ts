import { describe, expect, it } from '@jest/globals';
import Joi from 'joi';
import { detailStyle } from './errors.js';
import { buildOpenApi, operationIdOf } from './openapi.js';
import { defineRoute, type RouteSpec } from './route.js';

const noop = () => undefined;

/** The document of `routes`, served under `/api` in the `{detail}` error style (validation status 422). */
const documentOf = (routes: RouteSpec[], tags?: Record<string, string>) =>
  buildOpenApi({ info: { title: 'T', version: '1', tags }, basePath: '/api', routes, errors: detailStyle() }) as {
    [key: string]: unknown;
    paths: Record<string, Record<string, any>>;
  };

describe('buildOpenApi', () => {
  it('describes multipart files as OpenAPI 3 binary strings, with the content types a field declares', () => {
    const route = defineRoute({
      method: 'post',
      path: '/upload',
      summary: 'upload',
      request: {
        multipart: Joi.object({
          file: Joi.any().meta({ swaggerType: 'file', contentType: 'video/mp4' }).required(),
          frames: Joi.array().items(Joi.any().meta({ swaggerType: 'file', contentType: 'image/png' })),
          note: Joi.string(),
        }),
      },
      responses: { 201: { description: 'stored' } },
      handler: noop,
    });
    const media = documentOf([route]).paths['/api/upload'].post.requestBody.content['multipart/form-data'];
    expect(media.schema.properties.file).toEqual({ type: 'string', format: 'binary' });
    expect(media.schema.properties.frames.items).toEqual({ type: 'string', format: 'binary' });
    expect(JSON.stringify(media)).not.toMatch(/"type":"file"|formData/);
    expect(media.encoding).toEqual({ file: { contentType: 'video/mp4' }, frames: { contentType: 'image/png' } });
  });

  it('folds conditional requirements into the field, says free-form objects take any key and lists null in a nullable enum', () => {
    const route = defineRoute({
      method: 'post',
      path: '/alerts',
      summary: 'alerts',
      request: {
        body: Joi.object({
          encoding: Joi.string().valid('base64', 'raw'),
          data: Joi.string().when('encoding', { is: 'base64', then: Joi.required() }),
          text: Joi.when('encoding', { is: 'raw', then: Joi.string().required(), otherwise: Joi.string() }),
          metadata: Joi.object().unknown(true),
          labels: Joi.object().pattern(Joi.string(), Joi.string()),
        }),
      },
      responses: {
        200: {
          description: 'ok',
          schema: Joi.object({ suppressed: Joi.string().valid('duplicate').allow(null) }),
        },
      },
      handler: noop,
    });
    const op = documentOf([route]).paths['/api/alerts'].post;
    const body = op.requestBody.content['application/json'].schema.properties;
    expect(body.data).toEqual({ type: 'string' });
    expect(body.text).toEqual({ type: 'string' });
    expect(body.metadata).toEqual({ type: 'object', additionalProperties: true });
    expect(body.labels).toEqual({ type: 'object', additionalProperties: { type: 'string' } });
    const suppressed = op.responses[200].content['application/json'].schema.properties.suppressed;
    expect(suppressed).toMatchObject({ enum: ['duplicate', null], nullable: true });
  });

  it("documents the kit's own error answers in the service's error style, keeping the route's own", () => {
    const json = defineRoute({
      method: 'post',
      path: '/things/:id',
      summary: 'json',
      request: { params: Joi.object({ id: Joi.string() }), body: Joi.object({ a: Joi.number() }) },
      responses: { 200: { description: 'ok' }, 413: { description: 'Too many things' } },
      handler: noop,
    });
    const plain = defineRoute({
      method: 'get',
      path: '/plain',
      summary: 'plain',
      responses: { 200: { description: 'ok', contentType: ['image/png', 'text/plain'] } },
      handler: noop,
    });
    const doc = documentOf([json, plain]);
    const responses = doc.paths['/api/things/{id}'].post.responses;
    expect(Object.keys(responses)).toEqual(['200', '400', '401', '413', '415', '422', '500']);
    expect(responses[413].description).toBe('Too many things');
    expect(responses[415].content['application/json'].schema.required).toEqual(['detail']);
    const plainOp = doc.paths['/api/plain'].get;
    expect(Object.keys(plainOp.responses)).toEqual(['200', '401', '500']);
    expect(plainOp.responses[200].content).toEqual({
      'image/png': { schema: { type: 'string', format: 'binary' } },
      'text/plain': { schema: { type: 'string' } },
    });
  });

  it('declares the API keys as a bearer scheme: every operation takes a key or none, health none at all', () => {
    const route = (path: string) =>
      defineRoute({ method: 'get', path, summary: path, responses: { 200: { description: 'ok' } }, handler: noop });
    const doc = documentOf([route('/things'), route('/health')]);
    expect(doc.components).toEqual({
      securitySchemes: { apiKey: expect.objectContaining({ type: 'http', scheme: 'bearer' }) },
    });
    expect(doc.security).toEqual([{ apiKey: [] }, {}]);
    const things = doc.paths['/api/things'].get;
    expect(things.security).toBeUndefined();
    expect(things.responses[401]).toMatchObject({
      headers: { 'WWW-Authenticate': { schema: { type: 'string' } } },
      content: { 'application/json': { schema: { required: ['detail'] } } },
    });
    const health = doc.paths['/api/health'].get;
    expect(health.security).toEqual([]);
    expect(health.responses[401]).toBeUndefined();
  });

  it('names every operation by its method and path, declares servers and every tag', () => {
    const route = (method: RouteSpec['method'], path: string, tags: string[]) =>
      defineRoute({ method, path, summary: path, tags, responses: { 200: { description: 'ok' } }, handler: noop });
    const doc = documentOf(
      [route('get', '/media/jobs/:job_id', ['jobs']), route('get', '/', ['health']), route('get', '/ws', ['events'])],
      { jobs: 'Background jobs', health: 'Liveness' },
    );
    expect(doc.paths['/api/media/jobs/{job_id}'].get.operationId).toBe('getMediaJobsByJobId');
    expect(doc.paths['/api/'].get.operationId).toBe('get');
    expect(doc).toMatchObject({ openapi: '3.0.3', servers: [{ url: '/' }] });
    expect(doc.tags).toEqual([
      { name: 'jobs', description: 'Background jobs' },
      { name: 'health', description: 'Liveness' },
      { name: 'events' },
    ]);
    expect(doc.info).toEqual({ title: 'T', version: '1' });
  });

  it("gives every JSON request body and success response an example: the schema's own, else one generated", () => {
    const route = defineRoute({
      method: 'post',
      path: '/things',
      summary: 'things',
      request: { body: Joi.object({ name: Joi.string().min(1).required(), size: Joi.number().integer() }) },
      responses: {
        201: { description: 'created', schema: Joi.object({ id: Joi.string().required() }).example({ id: 'th-1' }) },
        404: { description: 'no such thing' },
      },
      handler: noop,
    });
    const op = documentOf([route]).paths['/api/things'].post;
    expect(op.requestBody.content['application/json'].example).toEqual({ name: 'string', size: 0 });
    expect(op.responses[201].content['application/json'].example).toEqual({ id: 'th-1' });
    expect(op.responses[404].content['application/json'].example).toBeUndefined();
  });

  it('names each event of an event stream as a component and describes the stream as the sequence of them', () => {
    const route = defineRoute({
      method: 'get',
      path: '/events',
      summary: 'events',
      responses: {
        200: {
          description: 'stream',
          contentType: 'text/event-stream',
          events: { alert_action: Joi.object({ id: Joi.string().required() }), keepalive: Joi.object({}) },
        },
      },
      handler: noop,
    });
    const doc = documentOf([route]) as any;
    const items = doc.paths['/api/events'].get.responses[200].content['text/event-stream'].schema.items;
    expect(items.oneOf).toEqual([
      { $ref: '#/components/schemas/AlertActionEvent' },
      { $ref: '#/components/schemas/KeepaliveEvent' },
    ]);
    expect(items.discriminator).toEqual({
      propertyName: 'event',
      mapping: {
        alert_action: '#/components/schemas/AlertActionEvent',
        keepalive: '#/components/schemas/KeepaliveEvent',
      },
    });
    expect(doc.components.schemas.AlertActionEvent).toMatchObject({
      required: ['event', 'data'],
      properties: { event: { enum: ['alert_action'] }, data: { required: ['id'] } },
    });
  });

  it('refuses two streams whose events of one name differ, and shares one event component between equal ones', () => {
    const stream = (path: string, data: Joi.Schema) =>
      defineRoute({
        method: 'get',
        path,
        summary: path,
        responses: { 200: { description: 'stream', contentType: 'text/event-stream', events: { message: data } } },
        handler: noop,
      });
    const same = documentOf([
      stream('/a', Joi.object({ n: Joi.number() })),
      stream('/b', Joi.object({ n: Joi.number() })),
    ]);
    expect(Object.keys((same as any).components.schemas)).toEqual(['MessageEvent']);
    expect(() =>
      documentOf([stream('/a', Joi.object({ n: Joi.number() })), stream('/b', Joi.object({ s: Joi.string() }))]),
    ).toThrow('Two different schemas are named MessageEvent');
  });

  it('derives operationIds from every word of the path', () => {
    expect(operationIdOf('delete', '/media/:bucket_name/:video_id')).toBe('deleteMediaByBucketNameByVideoId');
    expect(operationIdOf('get', '/rules/search-responses/')).toBe('getRulesSearchResponses');
    expect(operationIdOf('post', '/tools/:name/invoke')).toBe('postToolsByNameInvoke');
  });

  it('refuses two routes that would share an operationId', () => {
    const route = (path: string) =>
      defineRoute({ method: 'get', path, summary: path, responses: { 200: { description: 'ok' } }, handler: noop });
    expect(() => documentOf([route('/rules'), route('/rules/')])).toThrow(/getRules/);
  });
});
