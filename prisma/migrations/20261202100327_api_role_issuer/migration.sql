-- AlterEnum
ALTER TYPE "ApiRole" ADD VALUE 'issuer';
