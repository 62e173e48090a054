import { type TSchema, Type } from 'typebox'

/** Cursor pagination (spec: list `limit` default 50, 1 to 100). The cursor is the id of the last item seen. */
export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ format: 'uuid' })),
  },
  { additionalProperties: false },
)

export const Page = <T extends TSchema>(item: T, id: string) =>
  Type.Object(
    {
      data: Type.Array(item),
      next_cursor: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
        description: 'Pass as `cursor` to get the next (older) page; null on the last page.',
      }),
    },
    { title: id, additionalProperties: false },
  )

export interface PageOf<T> {
  data: T[]
  next_cursor: string | null
}
